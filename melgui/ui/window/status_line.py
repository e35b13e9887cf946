"""The status bar: what runs now, requests this session (= quota units), tokens from usage."""

from __future__ import annotations

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.calls import summarize
from melgui.core.thread.changes import Change, EntryAdded, EntryChanged, StateChanged, TextAppended
from melgui.core.thread.entries import (
    AssistantEntry,
    CallEntry,
    NoteEntry,
    ThreadState,
    leg_started,
    turn_ended,
)
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.window.context_meter import ContextMeter

TURN_END_TEXT = {
    "done": "Ready",
    "failed": "The turn failed (see the chat)",
    "cancelled": "Stopped",
}


class StatusLine(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.activity = QLabel("Ready", self)
        self.progress = QLabel("", self)
        self.counts = QLabel("", self)
        self.addWidget(self.activity, 1)
        self.addPermanentWidget(self.progress)
        self.addPermanentWidget(self.counts)
        self.context_meter = ContextMeter(self)  # the window's fill, Compact
        self.addPermanentWidget(self.context_meter)
        self._bridge: SessionBridge | None = None
        self._state = ThreadState()
        self._phases: dict[str, CallPhase] = {}  # the calls' phases, as last said here
        self.messageChanged.connect(self._message_changed)

    def _message_changed(self, message: str) -> None:
        """A temporary message is drawn where the activity label sits: hide the label while
        one shows, for good. Qt's own hiding forgets itself (the label came back over the
        message when the bar's layout was redone by addPermanentWidget, or when the window
        showed after the message was said)."""
        self.activity.setVisible(not message)

    def follow(self, bridge: SessionBridge) -> None:
        if self._bridge is not None:
            self._bridge.threadChange.disconnect(self.on_change)
        self._bridge = bridge
        self._state = bridge.session.thread.state
        bridge.threadChange.connect(self.on_change)
        self.context_meter.follow(bridge)
        self.activity.setText("Ready")
        self._update_counts()

    def set_progress(self, text: str) -> None:
        """E.g. the local model loading."""
        self.progress.setText(text)

    def _update_counts(self) -> None:
        if self._bridge is None:
            return
        state = self._bridge.session.thread.state
        usage = state.usage
        requests = "1 request" if state.legs == 1 else f"{state.legs} requests"
        self.counts.setText(
            f"{requests}  ·  {usage.prompt_tokens:,} tokens in / {usage.completion_tokens:,} out"
        )
        self.counts.setToolTip("Each request to the server counts once against your quota")

    def on_change(self, change: Change) -> None:
        """What the session's thread says runs now."""
        match change:
            case StateChanged(state=state):
                self._state_changed(state)
            case EntryAdded(entry=AssistantEntry(streaming=True)) | TextAppended(reasoning=False):
                writing = f"The model is writing — request {self._state.leg}"
                if self.activity.text() != writing:
                    self.activity.setText(writing)
            case EntryChanged(entry=CallEntry() as entry):
                before = self._phases.get(entry.call_id)
                self._phases[entry.call_id] = entry.phase
                if entry.phase == "running" and before != "running":
                    summary = summarize(entry.name, entry.call.parsed, 60)
                    self.activity.setText(f"Running {entry.name} {summary}")
                elif entry.phase == "waiting" and before != "waiting":
                    self.activity.setText(f"Waiting for your approval: {entry.name}")
            case EntryAdded(entry=NoteEntry(note="retry", delay=delay)):
                self.activity.setText(f"Retrying in {delay:.0f} s")
            case _:
                pass

    def _state_changed(self, state: ThreadState) -> None:
        before, self._state = self._state, state
        if leg_started(before, state):
            again = f" (attempt {state.attempt})" if state.attempt > 1 else ""
            self.activity.setText(f"Waiting for the model — request {state.leg}{again}")
        if state.legs != before.legs:
            self._update_counts()
        if turn_ended(before, state):
            self._phases.clear()
            if state.outcome != "cancelled":
                self._update_counts()
            self.activity.setText(TURN_END_TEXT.get(state.outcome, "Ready"))
