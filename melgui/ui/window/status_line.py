"""The status bar: what runs now, requests this session (= quota units), tokens from usage.

A message (`showMessage`: an error, a note) too long for the room left of the permanent
widgets is elided at its end, not cut, and the whole of it is the bar's tooltip; in a
bar too narrow for both, the counts give the message their room until it goes. What
runs now ("Ready", "Running run_command …") is elided the same way (`ElidedLabel`): its
whole width never counts in the bar's minimum, which the window's own (720 px) must hold.
"""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QPainter, QPaintEvent, QResizeEvent
from PySide6.QtWidgets import QLabel, QSizeGrip, QStatusBar, QStyle, QStyleOption, QWidget

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
MESSAGE_ROOM = 240  # px a message keeps at least (all of it when shorter), counts or not
ACTIVITY_ROOM_TEXT = "Waiting for the model — request 1"  # what runs now keeps this room
LEFT, RIGHT, GAP = 6, 12, 2  # QStatusBar's own margins around its message (messageRect)


class ElidedLabel(QLabel):
    """One line of plain text, elided at its end when the label is narrower than it (the
    whole text its tooltip then); it asks for its text's width and needs none of it."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._text = ""
        self.setText(text)

    def text(self) -> str:
        return self._text

    def setText(self, text: str) -> None:
        self._text = text
        self._elide()
        self.updateGeometry()

    def sizeHint(self) -> QSize:
        width = self.fontMetrics().horizontalAdvance(self._text) + 2 * self.margin()
        return QSize(width, super().sizeHint().height())

    def minimumSizeHint(self) -> QSize:
        return QSize(0, super().minimumSizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._elide()

    def _elide(self) -> None:
        room = self.contentsRect().width()
        shown = self.fontMetrics().elidedText(self._text, Qt.TextElideMode.ElideRight, room)
        super().setText(shown)
        self.setToolTip(self._text if shown != self._text else "")


class StatusLine(QStatusBar):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.activity = ElidedLabel("Ready", self)
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
        self.setToolTip(message)
        self._make_room(message)

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._make_room(self.currentMessage())

    def _make_room(self, message: str) -> None:
        """The counts give way while `message` shows in a bar too narrow for both, and in
        one too narrow for them and what runs now (as long as "Waiting for the model —
        request 1"; longer is elided): "Ready" never vanishes for them."""
        shown = message or ACTIVITY_ROOM_TEXT
        wanted = min(self.fontMetrics().horizontalAdvance(shown), MESSAGE_ROOM)
        beside = [w for w in self._permanent() if w is not self.counts]
        layout = self.layout()
        spacing = max(0, layout.spacing()) if layout is not None else 0
        needed = sum(w.sizeHint().width() + spacing for w in [*beside, self.counts])
        room = self.width() - LEFT - RIGHT - GAP - needed
        self.counts.setVisible(room >= wanted)

    def _permanent(self) -> list[QWidget]:
        """The permanent widgets shown (the counts, the context meter, a host's label…)."""
        children = self.findChildren(QWidget, options=Qt.FindChildOption.FindDirectChildrenOnly)
        return [
            w
            for w in children
            if w is not self.activity and not isinstance(w, QSizeGrip) and not w.isHidden()
        ]

    def message_rect(self) -> QRect:
        """Where Qt draws the message: from the bar's left to the first permanent widget."""
        right = self.width() - RIGHT
        for widget in self._permanent():
            if widget.isVisible():
                right = min(right, widget.x() - GAP)
        grip = self.findChild(QSizeGrip)
        if grip is not None and grip.isVisible():
            right = min(right, grip.x())
        return QRect(LEFT, 0, max(0, right - LEFT), self.height())

    def drawn_message(self) -> str:
        """The message as the bar draws it: whole, or elided to fit `message_rect`."""
        message, width = self.currentMessage(), self.message_rect().width()
        return self.fontMetrics().elidedText(message, Qt.TextElideMode.ElideRight, width)

    def paintEvent(self, event: QPaintEvent) -> None:
        """Qt's own, with the message elided where Qt would cut it (a message that fits is
        drawn as Qt draws it)."""
        message, elided = self.currentMessage(), self.drawn_message()
        if elided == message:
            super().paintEvent(event)
            return
        painter = QPainter(self)
        option = QStyleOption()
        option.initFrom(self)
        style = self.style()
        style.drawPrimitive(QStyle.PrimitiveElement.PE_PanelStatusBar, option, painter, self)
        for widget in self._permanent():  # as Qt frames them
            if widget.isVisible():
                option.rect = widget.geometry()
                style.drawPrimitive(
                    QStyle.PrimitiveElement.PE_FrameStatusBarItem, option, painter, widget
                )
        painter.setPen(self.palette().windowText().color())
        flags = Qt.AlignmentFlag.AlignLeading | Qt.AlignmentFlag.AlignVCenter
        painter.drawText(self.message_rect(), int(flags) | int(Qt.TextFlag.TextSingleLine), elided)
        painter.end()

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
