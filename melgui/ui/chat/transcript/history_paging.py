"""How the chat view draws a conversation's history: pages, and a long one opened at its end.

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
from collections.abc import Callable, Sequence
from typing import Any

from PySide6.QtCore import QObject, QTimer

from melgui.core.agent.compaction import is_summary
from melgui.core.agent.compaction_view import is_summary_ack, persons_words
from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.calls import exit_code_of, shorten, summarize
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.protocol.tooling import HookRun
from melgui.core.store.records import NoteRecord
from melgui.ui.chat.blocks.call_body import SHOWN_LINES, body_html
from melgui.ui.chat.blocks.hook_runs import hook_lines_html, note_lines_html
from melgui.ui.chat.blocks.message_actions import message_actions_html
from melgui.ui.chat.blocks.tool_cards import card_html
from melgui.ui.chat.failure_text import explain_failure
from melgui.ui.chat.transcript.backfill import chunk_starts, first_screen_start, speaker_before
from melgui.ui.chat.transcript.compacted import draw_compacted
from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.theme import Colors

HISTORY_PAGE = 100  # messages drawn when a conversation is opened, and per "show earlier"
MAX_DRAWN = 3 * HISTORY_PAGE  # more drawn at the end of a turn: redraw the last page only
LOAD_TICK_S = 0.008  # drawing history: at most this long per event-loop tick
REVEAL_STEPS = (4, 12, SHOWN_LINES)  # lines a card shows as it unfolds, tick by tick
REVEAL_TICK_MS = 50  # three ticks: about 150 ms
RESULTS_LOOKAHEAD = 64  # a stored call's result is among the next this many messages


class HistoryPaging:
    """Mixed into ChatView (a QWidget): everything about drawing stored messages."""

    bridge: SessionBridge
    transcript: ChatTranscript
    colors: Colors
    card_extra: Callable[[str, CallPhase], str] | None
    user_links: Callable[[int], str] | None

    def _init_paging(self, owner: QObject) -> None:
        """`owner`: the view itself (its timers go with it)."""
        self._calls: dict[str, tuple[str, str]] = {}  # id -> (tool, summary)
        self._call_args: dict[str, dict[str, Any] | None] = {}  # id -> decoded arguments
        self._call_results: dict[str, str] = {}  # id -> the result's text, once in
        self.unfolded: set[str] = set()  # cards the person opened (a waiting one is open)
        self._revealing: dict[str, int] = {}  # id -> its step in REVEAL_STEPS while opening
        self._reveal_timer = QTimer(owner)
        self._reveal_timer.setInterval(REVEAL_TICK_MS)
        self._reveal_timer.timeout.connect(self._reveal_step)
        # id -> (status, duration) as last drawn, so a redraw keeps live states.
        self._card_states: dict[str, tuple[CallPhase, float | None]] = {}
        self._card_ends: dict[str, tuple[int | None, float]] = {}  # id -> (exit code, wait)
        self._card_notes: dict[str, str] = {}  # id -> a running call's live line (progress)
        # What a compaction summary stands for, drawn dimmed in its place (the person's view).
        self.compacted: list[Message] = []
        # id -> the hooks that ran around it, and its notes (the diagnostics after an edit)
        self._card_hooks: dict[str, tuple[tuple[HookRun, ...], tuple[str, ...]]] = {}
        self._shown_from = 0
        self._shown_to: int | None = None  # end of an earlier page shown; None: to the end
        # A page drawn a few messages per tick, so "show earlier" never stalls the window.
        self._pending: deque[tuple[int, Message]] = deque()  # (index, message)
        self._pending_states: dict[str, tuple[CallPhase, float | None]] = {}
        self._load_timer = QTimer(owner)
        self._load_timer.setSingleShot(True)
        self._load_timer.timeout.connect(lambda: self._draw_pending(LOAD_TICK_S))
        # The opened page above the first screen: chunks still to draw in (last first),
        # the one being drawn, where they go, and the messages they come from.
        self._chunks: list[tuple[int, int]] = []
        self._chunk: tuple[ChatTranscript, int, int] | None = None  # (scratch, next, end)
        self._front = 0
        self._backfill_messages: Sequence[Message] = ()
        self._backfill_states: dict[str, tuple[CallPhase, float | None]] = {}
        self._backfill_timer = QTimer(owner)
        self._backfill_timer.setSingleShot(True)
        self._backfill_timer.timeout.connect(lambda: self._draw_earlier(LOAD_TICK_S))
        # (position, kind, text) of a reopened conversation's errors, retries and stops.
        self.failures: list[tuple[int, str, str]] = []

    def load_conversation(
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
        self._load_timer.stop()
        self._pending.clear()
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
        self._shown_from, self._shown_to = start, end
        self._pending_states = dict(self._card_states)  # live states outlive a redraw
        self.transcript.clear_all()
        self._calls.clear()
        if start:
            self.transcript.add_more_link(start)
        first = start
        if opening:
            first = first_screen_start(messages, start)
            self._front = self.transcript.front()
            self._backfill_messages = messages
            self._chunks = chunk_starts(messages, start, first)
            at = {at for at, _, _ in self.failures}
            self.transcript.continue_after(speaker_before(messages, start, first, at))
            self._backfill_states = dict(self._card_states)
        self._pending.extend(enumerate(messages[first:end], first))
        self._draw_pending(LOAD_TICK_S if progressive else None)
        if progressive:
            self.transcript.verticalScrollBar().setValue(0)
        if self._chunks:
            self._backfill_timer.start(0)

    def _draw_pending(self, budget: float | None = None) -> None:
        """Draw queued messages: all of them, or for `budget` seconds then on the next tick."""
        deadline = None if budget is None else time.perf_counter() + budget
        while self._pending:
            index, message = self._pending.popleft()
            self._draw_failures(index)
            self._draw_message(message, index)
            if deadline is not None and self._pending and time.perf_counter() > deadline:
                self._load_timer.start(0)
                return
        messages = self.bridge.session.conversation.messages
        if self._shown_to is not None:
            self.transcript.add_later_link(len(messages) - self._shown_to)
        else:
            self._draw_failures(len(messages))
        for call_id, (status, duration) in self._pending_states.items():
            self._set_card(call_id, status, duration)
        self._pending_states = {}
        self.transcript.finish_assistant(None)

    def _draw_earlier(self, budget: float | None) -> None:
        """Draw the opened page's earlier chunks in above the first screen: one message,
        or one chunk copied in, at a time until `budget` seconds are spent (then again on
        the next tick), or all of them."""
        deadline = None if budget is None else time.perf_counter() + budget
        shown = self.transcript
        while self._chunks or self._chunk is not None:
            if self._chunk is None:
                first, last = self._chunks.pop()
                scratch = shown.scratch()
                at = {at for at, _, _ in self.failures}
                messages = self._backfill_messages
                scratch.continue_after(speaker_before(messages, self._shown_from, first, at))
                self._chunk = (scratch, first, last)
            scratch, index, last = self._chunk
            if index < last:
                self.transcript = scratch  # what _draw_message draws into
                try:
                    self._draw_failures(index)
                    self._draw_message(self._backfill_messages[index], index)
                finally:
                    self.transcript = shown
                self._chunk = (scratch, index + 1, last)
            else:
                self._chunk = None
                shown.take_front(scratch, self._front)
                for call_id in scratch.card_ids():  # live states outlive a redraw
                    if call_id in self._backfill_states:
                        self._set_card(call_id, *self._backfill_states[call_id])
            if deadline is not None and time.perf_counter() > deadline:
                break
        if self._chunks or self._chunk is not None:
            self._backfill_timer.start(0)

    def _stop_backfill(self) -> None:
        self._backfill_timer.stop()
        self._chunks = []
        self._chunk = None

    def _finish_loading(self) -> None:
        """Everything queued is drawn now (a live event comes after all of it)."""
        if self._pending or self._load_timer.isActive():
            self._load_timer.stop()
            self._draw_pending(None)
        if self._chunks or self._chunk is not None:
            self._backfill_timer.stop()
            self._draw_earlier(None)

    def show_failures(self, failures: list[tuple[int, NoteRecord]]) -> None:
        """A reopened conversation's errors, retries and stops, drawn where they happened."""
        if failures:
            self.failures = [(at, note.kind, note.text) for at, note in failures]
            self.load_conversation(self.bridge.session.conversation)

    def _draw_failures(self, position: int) -> None:
        """Errors, retries and stops of a reopened conversation, where they happened."""
        colors = {"error": self.colors.error, "stopped": self.colors.warn}
        for at, kind, text in self.failures:
            if at != position:
                continue
            if kind == "error":
                explained = explain_failure(text, None)
                self.transcript.add_notice(explained.text, colors[kind], action=explained.action)
            elif kind == "stopped":
                self.transcript.add_notice("Stopped.", colors[kind], action=shorten(text, 120))
            else:
                self.transcript.add_notice(f"Retried: {shorten(text, 160)}", self.colors.muted)

    def _show_more(self) -> None:
        """The page before the first drawn one; at most MAX_DRAWN messages stay drawn."""
        conversation = self.bridge.session.conversation
        start = max(0, self._shown_from - HISTORY_PAGE)
        if self.bridge.busy:  # live events append at the end: draw through to it
            self.load_conversation(conversation, start)
            return
        self.load_conversation(conversation, start, end=start + MAX_DRAWN, progressive=True)

    def _show_later(self) -> None:
        conversation = self.bridge.session.conversation
        end = (self._shown_to or len(conversation.messages)) + HISTORY_PAGE
        start = max(0, end - MAX_DRAWN)
        self.load_conversation(conversation, start, end=end, progressive=True)

    def _on_busy(self, busy: bool) -> None:
        if busy and self._shown_to is not None:  # a turn starts: show where it goes on
            self.load_conversation(self.bridge.session.conversation)

    def _bound_drawn(self) -> None:
        """A long live session keeps only its last page drawn, so memory stays bounded."""
        messages = self.bridge.session.conversation.messages
        bar = self.transcript.verticalScrollBar()
        if len(messages) - self._shown_from > MAX_DRAWN and bar.value() >= bar.maximum():
            self.load_conversation(self.bridge.session.conversation)

    def _user_links(self, index: int) -> str:
        """The icon actions under the person's message `index` (copy, edit, rewind)."""
        if index < 0:
            return ""
        rewind = self.user_links(index) if self.user_links is not None else ""
        return message_actions_html(index, self.colors, rewind)

    def _draw_message(self, message: Message, index: int) -> None:
        if is_summary(message):
            draw_compacted(self.transcript, self.compacted, self.colors)
        elif is_summary_ack(message):
            pass  # written by compaction for the model, not an answer
        elif message.role == "user":
            words = persons_words(message.content)
            self.transcript.add_user(words, self._user_links(index), message.parts)
        elif message.role == "assistant":
            self.transcript.add_thinking(message.reasoning)
            self.transcript.add_assistant(message.content)
            for call in message.tool_calls:
                self._add_card(call, self._result_after(index, call.id))
        elif message.role == "tool" and message.tool_call_id is not None:
            status: CallPhase = message.status or "ok"
            exit_code = exit_code_of(message.content)
            self._call_results[message.tool_call_id] = message.content
            self._set_card(message.tool_call_id, status, exit_code=exit_code)
        elif message.role == "system":
            self.transcript.add_notice(shorten(message.content, 200), self.colors.muted)

    def _result_after(self, index: int, call_id: str) -> CallPhase:
        """A stored call drawn at once as it ended (its result follows its message), so
        its card is drawn once, not as requested and then again; "requested" if not."""
        messages = self.bridge.session.conversation.messages
        for message in messages[index + 1 : index + 1 + RESULTS_LOOKAHEAD]:
            if message.role != "tool":
                break
            if message.tool_call_id == call_id:
                code = exit_code_of(message.content)
                if code is not None:
                    self._card_ends[call_id] = (code, 0.0)
                self._call_results[call_id] = message.content
                return message.status or "ok"
        return "requested"

    def _add_card(self, call: ToolCall, status: CallPhase) -> None:
        summary = summarize(call.name, call.parsed)
        self._calls[call.id] = (call.name, summary)
        self._call_args[call.id] = call.parsed
        self.transcript.add_card(call.id, self._card_html(call.id, status, None))

    def toggle_card(self, call_id: str) -> None:
        """Unfold a card in place to its change or output, or fold it again. Unfolding
        grows in REVEAL_STEPS over about 150 ms, but at once while the agent runs
        (nothing moves while text streams in)."""
        self.unfolded ^= {call_id}
        if call_id not in self._card_states:
            return
        if call_id in self.unfolded and not self.bridge.busy:
            self._revealing[call_id] = 1
            self._reveal_timer.start()
        self._set_card(call_id, *self._card_states[call_id])

    def _reveal_step(self) -> None:
        for call_id in list(self._revealing):
            step = self._revealing[call_id] + 1
            if step >= len(REVEAL_STEPS) or call_id not in self.unfolded:
                del self._revealing[call_id]
            else:
                self._revealing[call_id] = step
            if call_id in self._card_states:
                self._set_card(call_id, *self._card_states[call_id])
        if not self._revealing:
            self._reveal_timer.stop()

    def _stored_steps(self, call_id: str) -> tuple[tuple[HookRun, ...], tuple[str, ...]]:
        """A reopened call's hook runs and notes, as its thread entry has them back."""
        entry = self.bridge.session.thread.call(call_id)
        return (entry.hooks, entry.notes) if entry is not None else ((), ())

    def set_card_note(self, call_id: str, note_html: str) -> None:
        """A live line on a running call's card (an MCP tool's progress); gone when it ends."""
        state = self._card_states.get(call_id)
        if state is None or state[0] not in ("requested", "waiting", "running"):
            return
        self._card_notes[call_id] = note_html
        self._set_card(call_id, *state)

    def _set_card(
        self,
        call_id: str,
        status: CallPhase,
        duration: float | None = None,
        *,
        exit_code: int | None = None,
        waited: float = 0.0,
    ) -> None:
        if call_id not in self._calls:
            return
        self._card_states[call_id] = (status, duration)
        if exit_code is not None or waited:
            self._card_ends[call_id] = (exit_code, waited)
        if status not in ("requested", "waiting", "running"):
            self._card_notes.pop(call_id, None)
        self.transcript.update_card(call_id, self._card_html(call_id, status, duration))

    def _card_html(self, call_id: str, status: CallPhase, duration: float | None) -> str:
        name, summary = self._calls[call_id]
        exit_code, waited = self._card_ends.get(call_id, (None, 0.0))
        extra = self.card_extra(call_id, status) if self.card_extra is not None else ""
        if status in ("requested", "waiting", "running"):
            extra += self._card_notes.get(call_id, "")
        runs, notes = self._card_hooks.get(call_id) or self._stored_steps(call_id)
        extra = hook_lines_html(runs, self.colors) + note_lines_html(notes, self.colors) + extra
        unfolded = status == "waiting" or call_id in self.unfolded
        arguments = self._call_args.get(call_id)
        body = ""
        if unfolded:
            result = self._call_results.get(call_id)
            shown = REVEAL_STEPS[self._revealing.get(call_id, len(REVEAL_STEPS) - 1)]
            body = body_html(call_id, name, arguments, status, result, self.colors, shown)
        return card_html(
            call_id,
            name,
            summary,
            status,
            self.colors,
            duration,
            extra,
            exit_code=exit_code,
            waited=waited,
            arguments=arguments,
            body_html=body,
            expanded=unfolded,
        )
