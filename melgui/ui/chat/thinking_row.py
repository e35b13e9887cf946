"""The live row under the conversation while the model has not answered yet.

"Thinking · 4 s — reading the conversation… 33%" and a Stop button: it shows the moment
a turn starts (the person's message is drawn above it), follows the stage the transport
reports (the local model's loading and prompt reading), and goes when the answer's first
words, a tool call or the end of the turn arrive; each later leg brings it back.
"""

from __future__ import annotations

import time

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QSizePolicy, QWidget

from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantReasoning,
    AssistantText,
    LegStarted,
    LoopEvent,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_M, SPACE_XS
from melgui.ui.runtime.theme import Colors

ANSWERING = (AssistantText, AssistantReasoning, ApprovalNeeded, ToolCallStarted)
ENDS = (TurnFinished, TurnFailed, TurnCancelled)
LOCAL_PREFIX = "Local model: "


class ThinkingRow(QWidget):
    stopRequested = Signal()

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setAccessibleName("The model is thinking")
        self.label = QLabel(self)
        # Cut at the chat's edge when narrow, never holding the chat (a pane) wide: a
        # minimum that came and went with the row moved the panes' splits, and each chat
        # beside it laid its text out again.
        self.label.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        self.stop_button = QPushButton("Stop", self)
        self.stop_button.setToolTip("Stop this turn (Esc); the conversation stays valid")
        self.stop_button.clicked.connect(self.stopRequested)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE_M, SPACE_2XS, SPACE_XS, SPACE_2XS)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.stop_button)
        self._stage = ""
        self._since = 0.0
        self._busy = False
        self._tick = QTimer(self)
        self._tick.setInterval(1000)
        self._tick.timeout.connect(self._redraw)
        self.set_colors(colors)
        self.hide()

    def text(self) -> str:
        return self.label.text()

    def set_colors(self, colors: Colors) -> None:
        self.label.setStyleSheet(f"color: {colors.muted}")

    def set_stage(self, text: str) -> None:
        """What the transport is doing (e.g. "Local model: reading the conversation… 33%")."""
        self._stage = text.removeprefix(LOCAL_PREFIX)
        if self.isVisible():
            self._redraw()

    def on_busy(self, busy: bool) -> None:
        self._busy = busy
        if busy:
            self._stage = ""
            self._start()
        else:
            self._stop()

    def on_event(self, event: LoopEvent) -> None:
        if isinstance(event, LegStarted) and self._busy:
            self._start()
        elif isinstance(event, (*ANSWERING, *ENDS)):
            self._stop()

    def _start(self) -> None:
        if not self.isVisible():
            self._since = time.monotonic()
            self.show()
        self._tick.start()
        self._redraw()
        self.repaint()  # on screen now: a local model's load may hold the loop next

    def _stop(self) -> None:
        self._tick.stop()
        self.hide()

    def _redraw(self) -> None:
        seconds = int(time.monotonic() - self._since)
        waited = f" · {seconds} s" if seconds else ""
        stage = self._stage or "waiting for the model's first words"
        self.label.setText(f"Thinking{waited} — {stage}")
