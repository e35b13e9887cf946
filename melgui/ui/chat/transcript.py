"""The conversation as one read-only rich-text document: selectable and copyable across messages.

Only the end of the document changes while a message streams: deltas are buffered and
flushed on a timer; segments that became final are appended once, and the open tail is
removed and rendered again. Its length is counted from the end of the document, so an
edit earlier on (a tool card's status) never confuses it.
"""

from __future__ import annotations

import html
import math
import time
from collections import deque
from urllib.parse import unquote

from PySide6.QtCore import Qt, QTimer, QUrl, Signal
from PySide6.QtGui import (
    QColor,
    QDesktopServices,
    QGuiApplication,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
    QTextDocumentFragment,
    QTextFrameFormat,
    QTextLength,
    QTextTable,
    QTextTableFormat,
)
from PySide6.QtWidgets import QTextBrowser, QWidget

from melgui.ui.chat.markdown_blocks import MarkdownSplitter, Segment
from melgui.ui.chat.segment_html import COPY_SCHEME, SegmentRenderer, warm_up
from melgui.ui.theme import Colors

FLUSH_MS = 40
FLUSH_BUDGET_S = 0.008
CALL_SCHEME = "call"
MORE_SCHEME = "more"


class _OpenMessage:
    """The assistant message being streamed: its splitter, unflushed deltas, tail size."""

    def __init__(self, first_code_id: int) -> None:
        self.splitter = MarkdownSplitter(first_code_id)
        self.pending: list[str] = []
        self.ready: deque[Segment] = deque()  # final, not drawn yet
        self.tail_dirty = False
        self.tail_len = 0
        self.streamed = False


class ChatTranscript(QTextBrowser):
    callActivated = Signal(str)  # a tool card was clicked: the call id
    moreRequested = Signal()  # "show earlier messages" was clicked

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self._renderer = SegmentRenderer(colors)
        self.setOpenLinks(False)
        self.setUndoRedoEnabled(False)
        self.document().setUndoRedoEnabled(False)
        self.document().setDocumentMargin(12)
        self.setTextInteractionFlags(Qt.TextInteractionFlag.TextBrowserInteraction)
        self.anchorClicked.connect(self._on_anchor)
        self._open: _OpenMessage | None = None
        self._scratch = QTextDocument(self)
        self._codes: dict[int, str] = {}  # copy id -> code text of finished messages
        self._next_code_id = 1  # copy ids are unique across messages
        self._cards: dict[str, QTextTable] = {}
        self._last_speaker = ""
        self._stick = True
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.setInterval(FLUSH_MS)
        self._timer.timeout.connect(self.flush)
        QTimer.singleShot(0, warm_up)  # Pygments and Markdown load before the first answer
        bar = self.verticalScrollBar()
        bar.valueChanged.connect(self._on_scrolled)
        bar.rangeChanged.connect(self._on_range)

    # --- what the chat view calls -------------------------------------------------

    def set_colors(self, colors: Colors) -> None:
        """New colours for what is drawn from now on (the view redraws the history)."""
        self.colors = colors
        self._renderer = SegmentRenderer(colors)

    def clear_all(self) -> None:
        self._timer.stop()
        self._open = None
        self._cards.clear()
        self._codes.clear()
        self._next_code_id = 1
        self._last_speaker = ""
        self.document().clear()
        self._stick = True

    def add_more_link(self, hidden: int) -> None:
        self._append_html(
            f'<p align="center"><a href="{MORE_SCHEME}:">Show {hidden} earlier messages</a></p>'
        )

    def add_user(self, text: str) -> None:
        self.finish_assistant(None)
        self._header("You")
        table = self._insert_box(self.colors.user_bubble, border=0)
        cursor = table.cellAt(0, 0).firstCursorPosition()
        escaped = html.escape(text).replace("\n", "<br>")
        cursor.insertHtml(f'<span style="color:{self.colors.text}">{escaped}</span>')
        self._stick = True
        self._scroll_if_stuck()

    def stream_text(self, delta: str) -> None:
        """Buffer streamed assistant text; it is drawn on the next timer tick."""
        message = self._begin_assistant()
        message.pending.append(delta)
        message.streamed = True
        if not self._timer.isActive():
            self._timer.start(FLUSH_MS)

    def finish_assistant(self, text: str | None) -> None:
        """The assistant message is complete. `text` is drawn if nothing was streamed."""
        message = self._open
        if message is None and text:
            message = self._begin_assistant()
            message.pending.append(text)
        if message is None:
            return
        self.flush(budget=None)
        self._replace_tail("")
        for segment in message.splitter.finish():
            self._append_html(self._renderer.render(segment))
        self._codes.update(message.splitter.code_texts())
        self._next_code_id = message.splitter.next_code_id
        self._open = None
        self._scroll_if_stuck()

    def add_assistant(self, text: str) -> None:
        """A whole assistant message at once (when reopening a conversation)."""
        self.finish_assistant(None)
        if text.strip():
            self.finish_assistant(text)

    def add_card(self, call_id: str, card_html: str) -> None:
        self.finish_assistant(None)
        if self._last_speaker != "Assistant":
            self._header("Assistant")
        table = self._insert_box(self.colors.card_bg, border=1)
        table.cellAt(0, 0).firstCursorPosition().insertHtml(card_html)
        self._cards[call_id] = table
        self._scroll_if_stuck()

    def update_card(self, call_id: str, card_html: str) -> None:
        table = self._cards.get(call_id)
        if table is None:
            return
        cell = table.cellAt(0, 0)
        cursor = cell.firstCursorPosition()
        cursor.setPosition(cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
        cursor.insertHtml(card_html)

    def has_card(self, call_id: str) -> bool:
        return call_id in self._cards

    def add_notice(self, text: str, color: str, *, action: str = "") -> None:
        """A one-line note in the conversation (an error and what to do, a stop, a retry)."""
        self.finish_assistant(None)
        body = html.escape(text)
        if action:
            body += f' <span style="color:{self.colors.muted}">— {html.escape(action)}</span>'
        self._append_html(f'<p style="margin-top:4px; margin-bottom:4px; color:{color}">{body}</p>')
        self._last_speaker = ""
        self._scroll_if_stuck()

    def code_text(self, code_id: int) -> str:
        if code_id in self._codes:
            return self._codes[code_id]
        if self._open is not None:
            return self._open.splitter.code_text(code_id)
        return ""

    # --- rendering -----------------------------------------------------------------

    def flush(self, budget: float | None = FLUSH_BUDGET_S) -> None:
        """Draw buffered deltas: append what became final, re-render the open tail.

        At most `budget` seconds of drawing per call: when text arrives faster than
        that, the rest is drawn on the next turn of the event loop, which never stalls.
        """
        message = self._open
        if message is None:
            return
        if message.pending:
            text = "".join(message.pending)
            message.pending.clear()
            message.ready.extend(message.splitter.feed(text))
            message.tail_dirty = True
        if not message.ready and not message.tail_dirty:
            return
        deadline = time.perf_counter() + budget if budget is not None else math.inf
        if message.ready:
            self._replace_tail("")
            message.tail_dirty = True
            while message.ready and time.perf_counter() < deadline:
                self._append_html(self._renderer.render(message.ready.popleft()))
        if message.ready:
            self._timer.start(0)  # the rest right after the loop has run once
        else:
            tail = message.splitter.tail()
            self._replace_tail(self._renderer.render(tail) if tail is not None else "")
            message.tail_dirty = False
        self._scroll_if_stuck()

    def _begin_assistant(self) -> _OpenMessage:
        if self._open is None:
            if self._last_speaker != "Assistant":
                self._header("Assistant")
            self._open = _OpenMessage(self._next_code_id)
        return self._open

    def _replace_tail(self, tail_html: str) -> None:
        message = self._open
        if message is None:
            return
        doc = self.document()
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        if message.tail_len:
            cursor.setPosition(cursor.position() - message.tail_len)
            cursor.movePosition(QTextCursor.MoveOperation.End, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
            cursor.setBlockFormat(QTextBlockFormat())
            cursor.setBlockCharFormat(QTextCharFormat())
            message.tail_len = 0
        if tail_html:
            message.tail_len = self._append_html(tail_html)

    def _append_html(self, fragment_html: str) -> int:
        """Insert at the end, then start a fresh empty block; returns characters added."""
        doc = self.document()
        fragment = QTextDocumentFragment.fromHtml(fragment_html, doc)
        cursor = QTextCursor(doc)
        cursor.movePosition(QTextCursor.MoveOperation.End)
        start = cursor.position()
        cursor.insertFragment(fragment)
        fix = QTextCursor(doc)
        fix.setPosition(start)
        first = self._first_block_format(fragment)
        if fix.block().length() == 1 and fix.block().next().position() < cursor.position():
            # A fragment starting with a list leaves the block at the cursor empty: fold it.
            folded = QTextBlockFormat()
            folded.setLineHeight(0, QTextBlockFormat.LineHeightTypes.FixedHeight.value)
            fix.setBlockFormat(folded)
        elif first is not None:
            # Qt merges the first block into the (empty) block at the cursor and drops
            # its format (margins, background); put it back.
            fix.setBlockFormat(first)
        cursor.insertBlock(QTextBlockFormat(), QTextCharFormat())
        return cursor.position() - start

    def _first_block_format(self, fragment: QTextDocumentFragment) -> QTextBlockFormat | None:
        scratch = self._scratch
        scratch.clear()
        QTextCursor(scratch).insertFragment(fragment)
        block = scratch.begin()
        if block.textList() is not None or block.blockFormat().isTableCellFormat():
            return None
        return block.blockFormat()

    def _header(self, speaker: str) -> None:
        self._last_speaker = speaker
        self._append_html(
            f'<p style="margin-top:10px; margin-bottom:2px;">'
            f'<b style="color:{self.colors.muted}; font-size:small">{speaker}</b></p>'
        )

    def _insert_box(self, background: str, *, border: int) -> QTextTable:
        cursor = QTextCursor(self.document())
        cursor.movePosition(QTextCursor.MoveOperation.End)
        fmt = QTextTableFormat()
        fmt.setBorder(border)
        fmt.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Solid)
        fmt.setBorderBrush(QColor(self.colors.border))
        fmt.setBorderCollapse(True)
        fmt.setCellPadding(7)
        fmt.setCellSpacing(0)
        fmt.setMargin(2)
        fmt.setBackground(QColor(background))
        fmt.setWidth(QTextLength(QTextLength.Type.PercentageLength, 100))
        table = cursor.insertTable(1, 1, fmt)
        return table

    # --- scrolling and links --------------------------------------------------------

    def _on_scrolled(self, value: int) -> None:
        self._stick = value >= self.verticalScrollBar().maximum() - 4

    def _on_range(self, _minimum: int, maximum: int) -> None:
        if self._stick:
            self.verticalScrollBar().setValue(maximum)

    def _scroll_if_stuck(self) -> None:
        if self._stick:
            bar = self.verticalScrollBar()
            bar.setValue(bar.maximum())

    def _on_anchor(self, url: QUrl) -> None:
        scheme = url.scheme()
        if scheme == COPY_SCHEME:
            try:
                code_id = int(url.path())
            except ValueError:
                return
            QGuiApplication.clipboard().setText(self.code_text(code_id))
        elif scheme == CALL_SCHEME:
            self.callActivated.emit(unquote(url.toString().partition(":")[2]))
        elif scheme == MORE_SCHEME:
            self.moreRequested.emit()
        elif scheme in ("http", "https"):
            QDesktopServices.openUrl(url)
