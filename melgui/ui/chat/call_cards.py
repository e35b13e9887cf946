"""The cards of a chat's tool calls: what each call is and how it stands (its phase, run
time, exit code, result, hooks, live note), and each card drawn into a transcript.

A card is drawn from what is kept here, so a redraw (a theme, a page drawn again, a
checkpoint that changed what the card says) shows the same state. A card unfolds in
place in REVEAL_STEPS over about 150 ms, at once while the agent runs (nothing moves
while text streams in).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from PySide6.QtCore import QObject, QTimer

from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.calls import summarize
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import HookRun
from melgui.core.thread.entries import CallEntry
from melgui.ui.chat.blocks.approval_card import question_html
from melgui.ui.chat.blocks.call_body import SHOWN_LINES, body_html
from melgui.ui.chat.blocks.hook_runs import hook_lines_html, note_lines_html
from melgui.ui.chat.blocks.tool_cards import card_html
from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.runtime.theme import Colors

REVEAL_STEPS = (4, 12, SHOWN_LINES)  # lines a card shows as it unfolds, tick by tick
REVEAL_TICK_MS = 50  # three ticks: about 150 ms
OPEN_PHASES: frozenset[CallPhase] = frozenset({"requested", "waiting", "running"})

State = tuple[CallPhase, float | None]  # (phase, run time) as last drawn
Steps = tuple[tuple[HookRun, ...], tuple[str, ...]]  # the hooks that ran around it, its notes


class CallCards(QObject):
    """`shown`: the transcript on screen (a card is drawn into another only while a page
    is drawn in above, see `add`); `busy()`: whether the agent runs; `stored_steps(id)`: a
    reopened call's hook runs and notes, as its thread entry has them back."""

    def __init__(
        self,
        shown: ChatTranscript,
        colors: Colors,
        busy: Callable[[], bool],
        stored_steps: Callable[[str], Steps],
        parent: QObject,
    ) -> None:
        super().__init__(parent)
        self.shown = shown
        self.colors = colors
        self._busy = busy
        self._stored_steps = stored_steps
        # What the window adds under a card (changed files, undo), given the call's id and
        # tool: html with act: links.
        self.extra: Callable[[str, str, CallPhase], str] | None = None
        # A waiting call's entry (its judgement and question, drawn as the card's
        # question), and what a tool says of itself (an MCP server's annotations).
        self.entry_of: Callable[[str], CallEntry | None] = lambda _id: None
        self.tool_notes: Callable[[str], str] | None = None
        self.calls: dict[str, tuple[str, str]] = {}  # id -> (tool, summary)
        self.arguments: dict[str, dict[str, Any] | None] = {}  # id -> decoded arguments
        self.results: dict[str, str] = {}  # id -> the result's text, once in
        self.states: dict[str, State] = {}  # as last drawn: a redraw keeps live states
        self.ends: dict[str, tuple[int | None, float]] = {}  # id -> (exit code, wait)
        self.notes: dict[str, str] = {}  # id -> a running call's live line (progress)
        # id -> the hooks that ran around it, and its notes (the diagnostics after an edit)
        self.hooks: dict[str, Steps] = {}
        self.unfolded: set[str] = set()  # cards the person opened (a waiting one is open)
        self._revealing: dict[str, int] = {}  # id -> its step in REVEAL_STEPS while opening
        self._reveal_timer = QTimer(self)
        self._reveal_timer.setInterval(REVEAL_TICK_MS)
        self._reveal_timer.timeout.connect(self._reveal_step)

    def forget_drawn(self) -> None:
        """The page is drawn again from nothing: which calls it shows comes anew."""
        self.calls.clear()

    def add(self, call: ToolCall, status: CallPhase, into: ChatTranscript | None = None) -> None:
        """The card of `call`, drawn as `status`, at the end of `into` (default: shown)."""
        self.calls[call.id] = (call.name, summarize(call.name, call.parsed))
        self.arguments[call.id] = call.parsed
        (into or self.shown).add_card(call.id, self.html(call.id, status, None))

    def set(
        self,
        call_id: str,
        status: CallPhase,
        duration: float | None = None,
        *,
        exit_code: int | None = None,
        waited: float = 0.0,
        into: ChatTranscript | None = None,
    ) -> None:
        """Draw a drawn card again as `status` (a call not drawn is left alone)."""
        if call_id not in self.calls:
            return
        self.states[call_id] = (status, duration)
        if exit_code is not None or waited:
            self.ends[call_id] = (exit_code, waited)
        if status not in OPEN_PHASES:
            self.notes.pop(call_id, None)
        (into or self.shown).update_card(call_id, self.html(call_id, status, duration))

    def ended(self, call_id: str, result: str, exit_code: int | None) -> None:
        """A stored call's end, known before its card is drawn (drawn once, as it ended)."""
        if exit_code is not None:
            self.ends[call_id] = (exit_code, 0.0)
        self.results[call_id] = result

    def redraw(self, states: dict[str, State]) -> None:
        """Draw again the shown cards of `states` as they were."""
        for call_id, (status, duration) in states.items():
            self.set(call_id, status, duration)

    def refresh(self) -> None:
        """Draw every card again (what a checkpoint says about it may have changed)."""
        self.redraw(dict(self.states))

    def set_note(self, call_id: str, note_html: str) -> None:
        """A live line on a running call's card (an MCP tool's progress); gone when it ends."""
        state = self.states.get(call_id)
        if state is None or state[0] not in OPEN_PHASES:
            return
        self.notes[call_id] = note_html
        self.set(call_id, *state)

    def toggle(self, call_id: str) -> None:
        """Unfold a card in place to its change or output, or fold it again."""
        self.unfolded ^= {call_id}
        if call_id not in self.states:
            return
        if call_id in self.unfolded and not self._busy():
            self._revealing[call_id] = 1
            self._reveal_timer.start()
        self.set(call_id, *self.states[call_id])

    def _reveal_step(self) -> None:
        for call_id in list(self._revealing):
            step = self._revealing[call_id] + 1
            if step >= len(REVEAL_STEPS) or call_id not in self.unfolded:
                del self._revealing[call_id]
            else:
                self._revealing[call_id] = step
            if call_id in self.states:
                self.set(call_id, *self.states[call_id])
        if not self._revealing:
            self._reveal_timer.stop()

    def _question(self, call_id: str, name: str) -> str:
        entry = self.entry_of(call_id)
        if entry is None or entry.phase != "waiting":
            return ""
        notes = self.tool_notes(name) if self.tool_notes is not None else ""
        return question_html(entry, self.colors, notes)

    def html(self, call_id: str, status: CallPhase, duration: float | None) -> str:
        name, summary = self.calls[call_id]
        exit_code, waited = self.ends.get(call_id, (None, 0.0))
        extra = self.extra(call_id, name, status) if self.extra is not None else ""
        if status in OPEN_PHASES:
            extra += self.notes.get(call_id, "")
        runs, notes = self.hooks.get(call_id) or self._stored_steps(call_id)
        if runs or notes:
            extra = hook_lines_html(runs, self.colors) + note_lines_html(notes, self.colors) + extra
        unfolded = status == "waiting" or call_id in self.unfolded
        arguments = self.arguments.get(call_id)
        body = ""
        if unfolded:
            result = self.results.get(call_id)
            shown = REVEAL_STEPS[self._revealing.get(call_id, len(REVEAL_STEPS) - 1)]
            question = self._question(call_id, name) if status == "waiting" else ""
            body = body_html(call_id, name, arguments, status, result, self.colors, shown, question)
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
