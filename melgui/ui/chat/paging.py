"""How a chat draws its conversation's history: pages, and a long one opened at its end.

Opening a conversation shows its last page (HISTORY_PAGE messages), but draws at once only
the messages that fill the first screen; the rest of the page is drawn in above them a
chunk at a time, in slices of at most LOAD_TICK_S each (a chunk is drawn into an unshown
transcript, then copied in), so the window paints the end of the conversation first and
never stalls, and ends up exactly as if the page had been drawn in one go. "Show
earlier/later messages" draws another page a few messages per tick.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence

from PySide6.QtCore import QObject, QTimer

from melgui.core.protocol.messages import Conversation, Message
from melgui.ui.chat.call_cards import CallCards, State
from melgui.ui.chat.stored_messages import StoredMessages
from melgui.ui.chat.transcript.backfill import chunk_starts, first_screen_start, speaker_before
from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.runtime.bridge import SessionBridge

HISTORY_PAGE = 100  # messages drawn when a conversation is opened, and per "show earlier"
MAX_DRAWN = 3 * HISTORY_PAGE  # more drawn at the end of a turn: redraw the last page only
LOAD_TICK_S = 0.008  # drawing history: at most this long per event-loop tick


class HistoryPaging(QObject):
    """Draws pages of `bridge`'s conversation into `transcript`, each message as `stored`
    draws it; `cards` keeps the live states a redraw puts back."""

    def __init__(
        self,
        transcript: ChatTranscript,
        bridge: SessionBridge,
        stored: StoredMessages,
        cards: CallCards,
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.transcript = transcript
        self.bridge = bridge
        self.stored = stored
        self.cards = cards
        self.shown_from = 0
        self.shown_to: int | None = None  # end of an earlier page shown; None: to the end
        # A page drawn a few messages per tick, so "show earlier" never stalls the window.
        self.pending: deque[tuple[int, Message]] = deque()  # (index, message)
        self._pending_states: dict[str, State] = {}
        self.load_timer = QTimer(self)
        self.load_timer.setSingleShot(True)
        self.load_timer.timeout.connect(lambda: self._draw_pending(LOAD_TICK_S))
        # The opened page above the first screen: chunks still to draw in (last first),
        # the one being drawn, where they go, and the messages they come from.
        self._chunks: list[tuple[int, int]] = []
        self._chunk: tuple[ChatTranscript, int, int] | None = None  # (scratch, next, end)
        self._front = 0
        self._backfill_messages: Sequence[Message] = ()
        self._backfill_states: dict[str, State] = {}
        self._backfill_timer = QTimer(self)
        self._backfill_timer.setSingleShot(True)
        self._backfill_timer.timeout.connect(lambda: self._draw_earlier(LOAD_TICK_S))

    @property
    def drawing_in(self) -> bool:
        """The opened page's earlier chunks are still being drawn in above."""
        return bool(self._chunks) or self._chunk is not None

    @property
    def loading(self) -> bool:
        """A page is still being drawn a few messages per tick."""
        return bool(self.pending) or self.load_timer.isActive()

    def load(
        self,
        conversation: Conversation,
        start: int | None = None,
        *,
        end: int | None = None,
        progressive: bool = False,
        lazy: bool = True,
    ) -> None:
        """Draw the conversation from message `start` (default: its last page) to `end`
        (default: the end). `progressive` draws a few messages per event-loop tick; the
        last page is drawn first screen first, the rest in slices, unless not `lazy`."""
        self.load_timer.stop()
        self.pending.clear()
        self._stop_backfill()
        messages = conversation.messages
        opening = start is None and end is None and not progressive and lazy
        if start is None:
            start = max(0, len(messages) - HISTORY_PAGE)
        # Never start (or end) between a call and its results.
        while 0 < start < len(messages) and messages[start].role == "tool":
            start -= 1
        while end is not None and end < len(messages) and messages[end].role == "tool":
            end += 1
        if end is not None and end >= len(messages):
            end = None
        self.shown_from, self.shown_to = start, end
        self._pending_states = dict(self.cards.states)  # live states outlive a redraw
        self.transcript.clear_all()
        self.cards.forget_drawn()
        if start:
            self.transcript.add_more_link(start)
        first = start
        if opening:
            first = first_screen_start(messages, start)
            self._front = self.transcript.front()
            self._backfill_messages = messages
            self._chunks = chunk_starts(messages, start, first)
            failures = self.stored.failure_positions()
            self.transcript.continue_after(speaker_before(messages, start, first, failures))
            self._backfill_states = dict(self.cards.states)
        self.pending.extend(enumerate(messages[first:end], first))
        self._draw_pending(LOAD_TICK_S if progressive else None)
        if progressive:
            self.transcript.verticalScrollBar().setValue(0)
        if self._chunks:
            self._backfill_timer.start(0)

    def _draw_pending(self, budget: float | None = None) -> None:
        """Draw queued messages: all of them, or for `budget` seconds then on the next tick."""
        deadline = None if budget is None else time.perf_counter() + budget
        shown = self.transcript
        while self.pending:
            index, message = self.pending.popleft()
            self.stored.draw_failures(index, shown)
            self.stored.draw(message, index, shown)
            if deadline is not None and self.pending and time.perf_counter() > deadline:
                self.load_timer.start(0)
                return
        messages = self.bridge.session.conversation.messages
        if self.shown_to is not None:
            shown.add_later_link(len(messages) - self.shown_to)
        else:
            self.stored.draw_failures(len(messages), shown)
        self.cards.redraw(self._pending_states)
        self._pending_states = {}
        shown.finish_assistant(None)

    def _draw_earlier(self, budget: float | None) -> None:
        """Draw the opened page's earlier chunks in above the first screen: one message,
        or one chunk copied in, at a time until `budget` seconds are spent (then again on
        the next tick), or all of them."""
        deadline = None if budget is None else time.perf_counter() + budget
        shown = self.transcript
        while self.drawing_in:
            if self._chunk is None:
                first, last = self._chunks.pop()
                scratch = shown.scratch()
                messages = self._backfill_messages
                failures = self.stored.failure_positions()
                scratch.continue_after(speaker_before(messages, self.shown_from, first, failures))
                self._chunk = (scratch, first, last)
            scratch, index, last = self._chunk
            if index < last:
                self.stored.draw_failures(index, scratch)
                self.stored.draw(self._backfill_messages[index], index, scratch)
                self._chunk = (scratch, index + 1, last)
            else:
                self._chunk = None
                shown.take_front(scratch, self._front)
                self.cards.redraw(  # live states outlive a redraw
                    {i: s for i, s in self._backfill_states.items() if i in scratch.card_ids()}
                )
            if deadline is not None and time.perf_counter() > deadline:
                break
        if self.drawing_in:
            self._backfill_timer.start(0)

    def _stop_backfill(self) -> None:
        self._backfill_timer.stop()
        self._chunks = []
        self._chunk = None

    def finish(self) -> None:
        """Everything queued is drawn now (a live change comes after all of it)."""
        if self.loading:
            self.load_timer.stop()
            self._draw_pending(None)
        if self.drawing_in:
            self._backfill_timer.stop()
            self._draw_earlier(None)

    def show_more(self) -> None:
        """The page before the first drawn one; at most MAX_DRAWN messages stay drawn."""
        conversation = self.bridge.session.conversation
        start = max(0, self.shown_from - HISTORY_PAGE)
        if self.bridge.busy:  # live changes append at the end: draw through to it
            self.load(conversation, start)
            return
        self.load(conversation, start, end=start + MAX_DRAWN, progressive=True)

    def show_later(self) -> None:
        conversation = self.bridge.session.conversation
        end = (self.shown_to or len(conversation.messages)) + HISTORY_PAGE
        self.load(conversation, max(0, end - MAX_DRAWN), end=end, progressive=True)

    def at_end(self) -> bool:
        """The page drawn reaches the conversation's end."""
        return self.shown_to is None

    def on_busy(self, busy: bool) -> None:
        if busy and self.shown_to is not None:  # a turn starts: show where it goes on
            self.load(self.bridge.session.conversation)

    def bound_drawn(self) -> None:
        """A long live session keeps only its last page drawn, so memory stays bounded."""
        messages = self.bridge.session.conversation.messages
        bar = self.transcript.verticalScrollBar()
        if len(messages) - self.shown_from > MAX_DRAWN and bar.value() >= bar.maximum():
            self.load(self.bridge.session.conversation)
