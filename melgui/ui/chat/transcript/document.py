"""The conversation as one read-only rich-text document: selectable and copyable across messages.

Only the end of the document changes while a message streams: deltas are buffered and
drawn by the process's shared flush scheduler (one timer and one time budget for every
transcript, so many panes streaming at once cost no more per tick than one); segments
that became final are appended once, and the open tail is removed and drawn again, only
when its HTML changed. Markdown and Pygments run on the render thread (open_message):
a tick only inserts HTML made there. A streamed message that ends with much left to
render is drawn in after `finish_assistant(background=True)` returns; later changes
wait their turn (in_order). An explicit `flush()` renders what it needs where it is.
The tail's length is counted from the end of the document, so an edit earlier on (a
tool card's status) never confuses it. One flush is one edit block:
Qt lays the document out and moves the scroll bar once per flush, not once per insert.
"""

from __future__ import annotations

import html
import math
import time
from collections import deque
from typing import Any

from PySide6.QtCore import QPoint, Qt, QTimer, Signal
from PySide6.QtGui import (
    QContextMenuEvent,
    QResizeEvent,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextTable,
)
from PySide6.QtWidgets import QFrame, QMenu, QTextBrowser, QWidget

from melgui.core.protocol.content import ImagePart, Part
from melgui.ui.chat.blocks.boxes import insert_box
from melgui.ui.chat.blocks.links import MORE_SCHEME, follow
from melgui.ui.chat.blocks.segment_html import shared_renderer, warm_up
from melgui.ui.chat.blocks.thinking_block import ThinkingBlock
from melgui.ui.chat.blocks.user_parts import IMAGE_SCHEME, parts_html
from melgui.ui.chat.column import centre_viewport
from melgui.ui.chat.transcript.doc_writer import DocWriter
from melgui.ui.chat.transcript.front_copy import copy_in_front, reset_scratch
from melgui.ui.chat.transcript.hover_actions import Kind, MessageHover, block_key, mark_block
from melgui.ui.chat.transcript.in_order import Call, in_order, run_waiting
from melgui.ui.chat.transcript.open_message import Batch, OpenMessage, html_for, render_batch
from melgui.ui.runtime.flush_scheduler import FLUSH_BUDGET_S, FLUSH_MS, shared_scheduler
from melgui.ui.runtime.look.fonts import body_font
from melgui.ui.runtime.look.tokens import SPACE_M, SPACE_S, SPACE_XS
from melgui.ui.runtime.render_thread import RenderJobs
from melgui.ui.runtime.theme import Colors

FIND_BACK = QTextDocument.FindFlag.FindBackward

__all__ = ["FLUSH_BUDGET_S", "FLUSH_MS", "ChatTranscript"]

IMAGE_RESOURCE = QTextDocument.ResourceType.ImageResource
# A finished message with more than this (characters) still to draw, rendered or not, is
# drawn in the background (finish_assistant(background=True)); less is drawn at once.
SYNC_FINISH_CHARS = 2_000
# Of a draw's time, the share inserting takes: the layout of it (about half as long) follows.
INSERT_SHARE = 0.5


class ChatTranscript(QTextBrowser):
    callActivated = Signal(str)  # a tool card was clicked: the call id
    moreRequested = Signal()  # "show earlier messages" was clicked
    actionRequested = Signal(str, str)  # (verb, argument) of an act: link
    laterRequested = Signal()  # "show later messages" was clicked
    cardToggled = Signal(str)  # a card's line was clicked: fold or unfold it in place

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self._renderer = shared_renderer(colors)
        self.setOpenLinks(False)
        self.setUndoRedoEnabled(False)
        self.document().setUndoRedoEnabled(False)
        self.document().setDocumentMargin(SPACE_M)
        self.setFont(body_font())  # the type scale's body size (View → Zoom goes from it)
        # No stylesheet of its own (the exact-type rules skip it): drawn by the style on
        # the palette's base, which costs nothing per paint; no frame round the page.
        self.setFrameShape(QFrame.Shape.NoFrame)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.anchorClicked.connect(lambda url: follow(self, url))
        self._open: OpenMessage | None = None
        self._codes: dict[int, str] = {}  # copy id -> code text of finished messages
        self._next_code_id = 1  # copy ids are unique across messages
        self._cards: dict[str, QTextTable] = {}
        self._card_html: dict[str, str] = {}  # what each card shows now
        self._thinking: dict[int, ThinkingBlock] = {}
        self._next_think = 1  # Thinking numbers (think:N links) are unique too
        self._image_urls: list[str] = []  # images the drawing shows (document resources)
        self._spare: ChatTranscript | None = None  # see scratch()
        self._thinking_now: ThinkingBlock | None = None  # the one streaming
        self._last_speaker = ""
        self._stick = True
        # Each message's actions (copy, edit, rewind, retry), shown while pointed at.
        self.hover = MessageHover(self, colors, self.actionRequested.emit)
        self._marks = self.hover.marks
        self._writer = DocWriter(self.document(), self)  # one edit block per flush
        self._scheduler = shared_scheduler()
        self._jobs = RenderJobs(self._on_rendered, self)
        self._batches: dict[int, tuple[OpenMessage, Batch]] = {}
        self.waiting: deque[Call] = deque()  # changes that wait for a message drawn in
        QTimer.singleShot(0, warm_up)  # Pygments and Markdown load before the first answer
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range)

    # --- what the chat view calls -------------------------------------------------

    def set_colors(self, colors: Colors) -> None:
        """New colours for what is drawn from now on (the view redraws the history)."""
        self.colors = colors
        self._renderer = shared_renderer(colors)
        self._writer.forget_formats()
        self.hover.set_colors(colors)

    def holding(self) -> bool:
        """A finished message is still being drawn in: changes wait (in_order)."""
        return self._open is not None and self._open.finished

    def clear_all(self) -> None:
        self._scheduler.cancel(self)
        self.waiting.clear()
        self._batches.clear()
        self._open = None
        self._cards.clear()
        self._card_html.clear()
        self._thinking.clear()
        self._next_think = 1
        self._image_urls.clear()
        self._thinking_now = None
        self._codes.clear()
        self._next_code_id = 1
        self.hover.clear()
        self._last_speaker = ""
        self.document().clear()
        self._stick = True

    @in_order
    def add_more_link(self, hidden: int) -> None:
        self._mark("")
        self._writer.append_html(
            f'<p align="center"><a href="{MORE_SCHEME}:">Show {hidden} earlier messages</a></p>'
        )

    @in_order
    def add_later_link(self, hidden: int) -> None:
        self.finish_assistant(None)
        self._mark("")
        self._writer.append_html(
            f'<p align="center"><a href="{MORE_SCHEME}:later">Show {hidden} later messages</a></p>'
        )

    @in_order
    def add_user(self, text: str, index: int = -1, parts: tuple[Part, ...] = ()) -> None:
        """The person's message `index` of the conversation (-1: not known), as a block
        whose actions (copy, edit, rewind) show while the pointer is over it."""
        self.finish_assistant(None)
        self._header("You")
        table = self._insert_box(self.colors.user_bubble, border=0)
        cursor = table.cellAt(0, 0).firstCursorPosition()
        self._marks.mark(cursor.block(), "you", index, text)
        escaped = html.escape(text).replace("\n", "<br>")
        cursor.insertHtml(f'<span style="color:{self.colors.text}">{escaped}</span>')
        if parts:
            self._image_urls += [
                f"{IMAGE_SCHEME}:{part.sha256}" for part in parts if isinstance(part, ImagePart)
            ]
            if text:
                cursor.insertBlock()
            cursor.insertHtml(parts_html(self.document(), parts, self.colors))
        self._stick = True
        self._scroll_if_stuck()

    @in_order
    def stream_reasoning(self, delta: str) -> None:
        """Buffer streamed reasoning; it grows in an open Thinking box on the next tick."""
        if self._open is not None and self._open.streamed:
            self.finish_assistant(None)  # reasoning after answer text: a box of its own
        block = self._thinking_now
        if block is None:
            block = self._thinking_now = self._add_thinking_box(streaming=True)
        block.pending.append(delta)
        self._scheduler.request(self)

    @in_order
    def add_thinking(self, text: str) -> None:
        """A finished message's reasoning (when reopening a conversation): folded."""
        self.finish_assistant(None)
        if text.strip():
            block = self._add_thinking_box(streaming=False)
            block.parts.append(text)

    def thinking_blocks(self) -> list[ThinkingBlock]:
        """In document order (earlier messages may have been drawn in above later ones)."""
        return sorted(self._thinking.values(), key=lambda block: block.position)

    def message_menu(self, point: QPoint) -> QMenu:
        """The context menu at `point` (viewport coordinates): Qt's own, then the actions
        of the message there."""
        scrolled = QPoint(self.horizontalScrollBar().value(), self.verticalScrollBar().value())
        menu = self.createStandardContextMenu(point + scrolled)
        self.hover.add_to_menu(menu, point)
        return menu

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = self.message_menu(event.pos())
        menu.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        menu.popup(event.globalPos())

    def resizeEvent(self, event: QResizeEvent) -> None:
        centre_viewport(self)  # the text stays in the chat's centred column
        super().resizeEvent(event)

    def toggle_card(self, call_id: str) -> None:
        self.cardToggled.emit(call_id)

    def toggle_thinking(self, number: int) -> None:
        block = self._thinking.get(number)
        if block is not None:
            block.toggle()

    @in_order
    def stream_text(self, delta: str) -> None:
        """Buffer streamed assistant text; it is drawn on the next timer tick."""
        self._fold_thinking()
        message = self._begin_assistant()
        message.pending.append(delta)
        message.streamed = True
        self._scheduler.request(self)

    @in_order
    def finish_assistant(self, text: str | None, *, background: bool = False) -> None:
        """The assistant message is complete. `text` is drawn if nothing was streamed.

        `background`: when much is left to draw (to render, or rendered and not inserted
        yet: a flood of text outruns the ticks' budget), it is rendered on the render
        thread and drawn in slices after this returns; later changes wait their turn."""
        self._fold_thinking()
        message = self._open
        if message is None and text:
            message = self._begin_assistant()
            message.pending.append(text)
        if message is None:
            return
        if text and message.mark in self._marks.by_key:  # what its Copy copies
            self._marks.by_key[message.mark].text = text
        message.finish()
        self._codes.update(message.splitter.code_texts())
        self._next_code_id = message.splitter.next_code_id
        if background and message.undrawn_chars() > SYNC_FINISH_CHARS:
            self._send(message)
            self._scheduler.request(self, soon=True)
            return
        self._close(message)

    def _close(self, message: OpenMessage) -> None:
        """Draw what is left of the finished `message` now; then the changes that waited."""
        self._scheduler.cancel(self)
        with self._writer.edit():
            self._replace_tail("")
            while message.ready:
                self._writer.append_html(html_for(message.ready.popleft(), self._renderer))
        self._open = None
        self._scroll_if_stuck()
        run_waiting(self)

    @in_order
    def add_assistant(self, text: str) -> None:
        """A whole assistant message at once (when reopening a conversation)."""
        self.finish_assistant(None)
        if text.strip():
            self.finish_assistant(text)

    @in_order
    def add_card(self, call_id: str, card_html: str) -> None:
        self.finish_assistant(None)
        if self._last_speaker != "Assistant":
            self._header("Assistant")
        table = self._insert_box(None, border=1)  # a hairline on the page: one line
        table.cellAt(0, 0).firstCursorPosition().insertHtml(card_html)
        self._cards[call_id] = table
        self._card_html[call_id] = card_html
        self._scroll_if_stuck()

    @in_order
    def update_card(self, call_id: str, card_html: str) -> None:
        table = self._cards.get(call_id)
        before = self._card_html.get(call_id)
        if table is None or before == card_html:
            return  # gone, or drawn as it is already
        self._card_html[call_id] = card_html
        cell = table.cellAt(0, 0)
        cursor = cell.firstCursorPosition()
        cursor.setPosition(cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
        if before is None or "<p" in before or "<pre" in before:
            # What is left of the old content keeps its last block's format (an unfolded
            # card's dark output block): the new line starts plain.
            cursor.removeSelectedText()
            cursor.setBlockFormat(QTextBlockFormat())
            cursor.setBlockCharFormat(QTextCharFormat())
        cursor.insertHtml(card_html)

    def card_html(self, call_id: str) -> str:
        """What a card shows now, as it was drawn ("" when not drawn)."""
        return self._card_html.get(call_id, "")

    def has_card(self, call_id: str) -> bool:
        """Drawn, or waiting to be drawn (in_order)."""
        waiting = any(name == "add_card" and args[0] == call_id for name, args, _ in self.waiting)
        return call_id in self._cards or waiting

    @in_order
    def add_notice(
        self, text: str, color: str, *, action: str = "", link: tuple[str, str] = ("", "")
    ) -> None:
        """A one-line note in the conversation (an error and what to do, a stop, a retry);
        `link`: (href, words) of a button-like link at its end, e.g. ("act:retry/", "Retry")."""
        self.finish_assistant(None)
        self._mark("")  # a notice has no actions
        body = html.escape(text)
        href, words = link
        if href:
            body += f' <a href="{html.escape(href)}"><b>{html.escape(words)}</b></a>'
        if action:
            body += f' <span style="color:{self.colors.muted}">— {html.escape(action)}</span>'
        style = f"margin-top:{SPACE_XS}px; margin-bottom:{SPACE_XS}px; color:{color}"
        self._writer.append_html(f'<p style="{style}">{body}</p>')
        self._last_speaker = ""
        self._scroll_if_stuck()

    def code_text(self, code_id: int) -> str:
        if code_id in self._codes:
            return self._codes[code_id]
        if self._open is not None:
            return self._open.splitter.code_text(code_id)
        return ""

    # --- earlier messages drawn in above (a long conversation opens at its end) -----

    @in_order
    def continue_after(self, speaker: str) -> None:
        """Draw on as if `speaker` ("Assistant", "You" or "") had just been drawn."""
        self._last_speaker = speaker

    def card_ids(self) -> list[str]:
        return list(self._cards)

    def front(self) -> int:
        """Where earlier messages will go: the end of the drawing so far. Ask before the
        first later message is drawn; it stays valid while only later ones are added."""
        return self.document().characterCount() - 1

    def scratch(self) -> ChatTranscript:
        """An unshown transcript to draw earlier messages into, for `take_front`; its copy
        ids and Thinking numbers follow this one's. (One, emptied for every use.)"""
        if self._spare is None:
            self._spare = ChatTranscript(self.colors, self)
        return reset_scratch(self, self._spare)

    @in_order
    def take_front(self, scratch: ChatTranscript, at: int) -> None:
        """Copy `scratch`'s drawing in at `at` (a `front()`), exactly as if it had been
        drawn there in order; its cards, Thinking blocks and code work from here on."""
        copy_in_front(self, scratch, at)

    # --- rendering -----------------------------------------------------------------

    def flush(self, budget: float | None = FLUSH_BUDGET_S) -> None:
        """Draw buffered deltas now: append what became final, draw the open tail again,
        rendering here what the render thread has not.

        At most `budget` seconds of drawing (after one segment at least): when text
        arrives faster than that, the shared scheduler draws the rest after the event
        loop has run once, so the loop never stalls.
        """
        deadline = time.perf_counter() + budget if budget is not None else math.inf
        if self._draw(deadline, here=True):
            self._scheduler.request(self, soon=True)

    def scheduled_flush(self, deadline: float) -> bool:
        """What the shared scheduler calls: insert what the render thread has made until
        `deadline`, send it the rest; True when work is left that can be drawn now."""
        return self._draw(deadline, here=False)

    def _draw(self, deadline: float, *, here: bool) -> bool:
        # Inserts take INSERT_SHARE of the time left: the layout when the edit block ends
        # follows in this draw (it overran the tick's budget by half again).
        now = time.perf_counter()
        inserts_until = now + (deadline - now) * INSERT_SHARE if deadline > now else deadline
        thinking = self._thinking_now
        if thinking is not None and thinking.pending:
            with self._writer.edit():
                self._writer.changing()
                thinking.flush()
            self._scroll_if_stuck()
        message = self._open
        if message is None:
            return False
        message.take_pending()
        if not here:
            self._send(message)
        with self._writer.edit():
            drew = False
            while message.ready and (not drew or time.perf_counter() < inserts_until):
                if message.ready[0].html is None and not here:
                    break  # on the render thread: drawn when it comes back
                if not drew:
                    self._replace_tail("")
                self._writer.append_html(html_for(message.ready.popleft(), self._renderer))
                drew = True
            # The open tail is drawn again once what became final is drawn, and in the
            # same tick only while time is left: else on the next one.
            time_left = not drew or time.perf_counter() < inserts_until
            if message.tail_dirty and not message.ready and time_left:
                self._draw_tail(message, here)
        if message.finished and not message.ready:
            self._close(message)
            return False
        self._scroll_if_stuck()
        if here:
            return bool(message.ready) or message.tail_dirty
        return bool(message.ready) and message.ready[0].html is not None

    def _draw_tail(self, message: OpenMessage, here: bool) -> None:
        tail_html = message.tail_now(self._renderer if here else None)
        if tail_html is None:
            return  # the render thread is rendering it as it is now
        if tail_html != message.tail_html:  # else the tail on screen is right
            self._replace_tail(tail_html)
        message.tail_dirty = False

    def _send(self, message: OpenMessage) -> None:
        """Send the render thread what the message needs rendered (one batch at a time)."""
        batch = message.next_batch()
        if batch is not None:
            segments = [entry.segment for entry in batch[0]]
            message.in_flight = self._jobs.submit(render_batch, self.colors, segments, batch[1])
            self._batches[message.in_flight] = (message, batch)

    def _on_rendered(self, ticket: int, result: Any) -> None:
        message, batch = self._batches.pop(ticket, (None, None))
        if message is None or batch is None or message is not self._open:
            return  # drawn at once meanwhile, or the transcript was cleared
        if isinstance(result, BaseException):
            message.failed(batch)
            for entry in batch[0]:  # rendered here instead (never seen: pure Python)
                html_for(entry, self._renderer)
        else:
            message.rendered(batch, *result)
        self._scheduler.request(self, soon=True)

    def _add_thinking_box(self, *, streaming: bool) -> ThinkingBlock:
        if self._last_speaker != "Assistant":
            self._header("Assistant")
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        number = self._next_think
        self._next_think += 1
        block = ThinkingBlock(number, cursor, self.colors, streaming=streaming)
        if not streaming:  # a finished one: what follows starts in a plain block
            cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        self._thinking[number] = block
        self._scroll_if_stuck()
        return block

    def _fold_thinking(self) -> None:
        block, self._thinking_now = self._thinking_now, None
        if block is not None:
            block.fold()

    def _begin_assistant(self) -> OpenMessage:
        if self._open is None:
            if self._last_speaker != "Assistant":
                self._header("Assistant")
            self._open = OpenMessage(self._next_code_id)
            self._open.mark = self._marks.answer or self._mark("answer")
            self._marks.answer = 0
        return self._open

    def _replace_tail(self, tail_html: str) -> None:
        message = self._open
        if message is None:
            return
        doc = self.document()
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if message.tail_len:
            self._writer.changing()
            cursor.setPosition(cursor.position() - message.tail_len)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            key = block_key(cursor.block())  # the message's mark stays where it starts
            cursor.setBlockFormat(QTextBlockFormat())
            cursor.setBlockCharFormat(QTextCharFormat())
            if key:
                mark_block(cursor.block(), key)
            message.tail_len = 0
        message.tail_html = tail_html
        if tail_html:
            message.tail_len = self._writer.append_html(tail_html)

    def _header(self, speaker: str) -> None:
        """Room between turns: the person's block and the answer need no labels."""
        self._last_speaker = speaker
        self._marks.answer = self._mark("answer") if speaker == "Assistant" else 0
        self._writer.append_html(
            f'<p style="margin-top:{SPACE_S}px; margin-bottom:0; font-size:{SPACE_XS}px"></p>'
        )

    def _insert_box(self, background: str | None, *, border: int) -> QTextTable:
        return insert_box(self.document(), self.colors, background, border=border)

    def _mark(self, kind: Kind) -> int:
        """Mark the document's last block as where the next message (of `kind`) starts."""
        return self._marks.mark(self.document().lastBlock(), kind)

    # --- scrolling and links --------------------------------------------------------

    def _on_scrolled(self, value: int) -> None:
        self._stick = value >= self.verticalScrollBar().maximum() - 4
        self.hover.hide()  # it follows the pointer's next move

    def _on_range(self, _minimum: int, maximum: int) -> None:
        if self._stick and not self._writer.drawing:
            self.verticalScrollBar().setValue(maximum)

    def reveal_card(self, call_id: str) -> bool:
        """Scroll to a call's card and select it; False when it is not drawn."""
        table = self._cards.get(call_id)
        if table is None:
            return False
        cursor = table.firstCursorPosition()
        cursor.setPosition(table.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
        return self._reveal(cursor)

    @in_order
    def focus_link(self, call_id: str, href: str, take_focus: bool = True) -> None:
        """Scroll a card's link `href` into view and put the keyboard on it (Enter follows
        it, Tab goes on to the next); the transcript takes the focus if `take_focus`."""
        table = self._cards.get(call_id)
        if table is None:
            return
        cursor = self._link_cursor(table, href)
        if cursor is None:
            return
        self._reveal(cursor)
        if take_focus:
            self.setFocus(Qt.FocusReason.OtherFocusReason)

    def link_cursor(self, call_id: str, href: str) -> QTextCursor | None:
        """A cursor over a card's link `href` (None: not drawn)."""
        table = self._cards.get(call_id)
        return self._link_cursor(table, href) if table is not None else None

    def _link_cursor(self, table: QTextTable, href: str) -> QTextCursor | None:
        start, end = table.firstPosition(), table.lastPosition()
        block = self.document().findBlock(start)
        while block.isValid() and block.position() <= end:
            it = block.begin()
            while not it.atEnd():
                fragment = it.fragment()
                if fragment.charFormat().anchorHref() == href:
                    cursor = QTextCursor(self.document())
                    cursor.setPosition(fragment.position())
                    cursor.setPosition(
                        fragment.position() + fragment.length(), QTextCursor.MoveMode.KeepAnchor
                    )
                    return cursor
                it += 1
            block = block.next()
        return None

    def card_at(self, position: int) -> str | None:
        """The call whose card holds document `position`."""
        for call_id, table in self._cards.items():
            if table.firstPosition() <= position <= table.lastPosition():
                return call_id
        return None

    def reveal_text(self, text: str) -> bool:
        """Scroll to the last place `text` is drawn and select it; False when it is not."""
        found = self.document().find(text, self.document().characterCount(), FIND_BACK)
        return not found.isNull() and self._reveal(found)

    def _reveal(self, cursor: QTextCursor) -> bool:
        self._stick = False  # a reader went back: new text must not pull the view away
        self.setTextCursor(cursor)
        bar = self.verticalScrollBar()
        bar.setValue(bar.value() + self.cursorRect(cursor).top() - self.viewport().height() // 4)
        return True

    def _scroll_if_stuck(self) -> None:
        if self._stick:
            bar = self.verticalScrollBar()
            bar.setValue(bar.maximum())
