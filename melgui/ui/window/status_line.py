"""The status bar: what runs now, requests this session (= quota units), tokens from usage."""

from __future__ import annotations

from typing import assert_never

from PySide6.QtWidgets import QLabel, QStatusBar, QWidget

from melgui.core.protocol.calls import summarize
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantReasoning,
    AssistantText,
    ContextNotice,
    HistoryBranched,
    HistoryRepaired,
    LegFinished,
    LegStarted,
    LoopEvent,
    MessageAdded,
    Retrying,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.window.context_meter import ContextMeter


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
        self._leg = 0

    def follow(self, bridge: SessionBridge) -> None:
        if self._bridge is not None:
            self._bridge.loopEvent.disconnect(self.on_event)
        self._bridge = bridge
        bridge.loopEvent.connect(self.on_event)
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

    def on_event(self, event: LoopEvent) -> None:
        match event:
            case LegStarted(leg=leg, attempt=attempt):
                again = f" (attempt {attempt})" if attempt > 1 else ""
                self._leg = leg
                self.activity.setText(f"Waiting for the model — request {leg}{again}")
            case AssistantText():
                writing = f"The model is writing — request {self._leg}"
                if self.activity.text() != writing:
                    self.activity.setText(writing)
            case ToolCallStarted(call=call):
                summary = summarize(call.name, call.parsed, 60)
                self.activity.setText(f"Running {call.name} {summary}")
            case ApprovalNeeded(request=request):
                self.activity.setText(f"Waiting for your approval: {request.call.name}")
            case LegFinished() | TurnFinished():
                self._update_counts()
                if isinstance(event, TurnFinished):
                    self.activity.setText("Ready")
            case TurnFailed():
                self._update_counts()
                self.activity.setText("The turn failed (see the chat)")
            case TurnCancelled():
                self.activity.setText("Stopped")
            case Retrying(delay=delay):
                self.activity.setText(f"Retrying in {delay:.0f} s")
            case (
                MessageAdded() | ToolCallRequested() | ToolCallFinished()
                | HistoryRepaired() | HistoryBranched() | AssistantReasoning()
                | ContextNotice()
            ):  # fmt: skip
                pass
            case _:
                assert_never(event)
