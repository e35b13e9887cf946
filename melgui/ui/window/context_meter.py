"""The context meter in the status bar: how much of the model's window the conversation
uses (colour as it fills), tokens this turn and in the conversation, cost where the
server reports it; Compact and Edit summary act on the session. A conversation that runs
in the melgui host is measured there (`context/measure`) and drawn the same way."""

from __future__ import annotations

from typing import Protocol

from PySide6.QtCore import QEvent, QObject, Qt, Signal
from PySide6.QtWidgets import (
    QDialog,
    QDialogButtonBox,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QProgressBar,
    QToolButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.agent.session import AgentSession
from melgui.core.context.measure import ContextMeasure, measure, measure_from_json
from melgui.core.protocol.events import Usage
from melgui.core.protocol.views.compacted import summary_text, with_summary
from melgui.core.thread.changes import Change, EntriesReplaced, EntryAdded, StateChanged
from melgui.core.thread.entries import NoteEntry, UserEntry
from melgui.host.client import HostGone
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.look.tokens import DIALOG_METER, METER_W, RADIUS_S, SPACE_S
from melgui.ui.runtime.theme import LIGHT, Colors

FULL_SCALE = 1000


class RingView(Protocol):
    def show_fraction(self, fraction: float | None, colour: str, tooltip: str) -> None: ...


def short(tokens: int) -> str:
    if tokens < 1000:
        return str(tokens)
    if tokens < 100_000:
        return f"{tokens / 1000:.1f}k"
    return f"{tokens // 1000}k"


def usage_text(usage: Usage) -> str:
    text = f"{usage.prompt_tokens:,} in / {usage.completion_tokens:,} out"
    if usage.cached_tokens:
        text += f" ({usage.cached_tokens:,} cached)"
    return text


class ContextMeter(QWidget):
    """Follows one session's bridge; redrawn on the events that change what it shows
    (`changed` says it again, for the composer's ring). A click on it asks for its popup
    (`detailsRequested`: what the tokens are spent on)."""

    detailsRequested = Signal()
    changed = Signal(object, str, str)  # fraction (None: unknown), colour, tooltip

    def __init__(self, parent: QWidget | None = None, colors: Colors = LIGHT) -> None:
        super().__init__(parent)
        self.colors = colors
        self.bar = QProgressBar(self)
        self.bar.setRange(0, FULL_SCALE)
        # A thin bar in the status colour, its words beside it (never text on the fill).
        self.bar.setFixedSize(METER_W, SPACE_S)
        self.bar.setTextVisible(False)
        self.words = QLabel("", self)
        self.bar.setCursor(Qt.CursorShape.PointingHandCursor)
        self.bar.installEventFilter(self)
        self.words.setCursor(Qt.CursorShape.PointingHandCursor)
        self.words.installEventFilter(self)
        self.tokens = QLabel("", self)
        self.compact_button = QToolButton(self)
        self.compact_button.setText("Compact")
        self.compact_button.setToolTip(
            "Summarise the older part of the conversation now (/compact); the originals "
            "stay in history"
        )
        self.compact_button.clicked.connect(self.compact)
        self.summary_button = QToolButton(self)
        self.summary_button.setText("Edit summary…")
        self.summary_button.clicked.connect(self.edit_summary)
        self.summary_button.hide()
        layout = QHBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.tokens)
        layout.addWidget(self.words)
        layout.addWidget(self.bar)
        layout.addWidget(self.compact_button)
        layout.addWidget(self.summary_button)
        self._bridge: SessionBridge | None = None
        self.dialog: SummaryEditor | None = None
        self.fraction: float | None = None
        self._legs = self._turns = 0  # the thread's, as last heard
        self.colour = colors.muted  # of the bar: the status the fraction is in
        self._tasks = TaskKeeper()  # a measure asked of the melgui host
        self._asked = 0  # the last one asked: an earlier answer is not drawn over it

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if watched in (self.bar, self.words) and event.type() == QEvent.Type.MouseButtonRelease:
            self.detailsRequested.emit()
            return True
        return super().eventFilter(watched, event)

    def follow(self, bridge: SessionBridge) -> None:
        if self._bridge is not None:
            self._bridge.threadChange.disconnect(self.on_change)
            self._bridge.busyChanged.disconnect(self._on_busy)
        self._bridge = bridge
        self._legs, self._turns = (
            bridge.session.thread.state.legs,
            bridge.session.thread.state.turns,
        )
        bridge.threadChange.connect(self.on_change)
        bridge.busyChanged.connect(self._on_busy)
        self.refresh()

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.refresh()

    def show_on(self, ring: RingView) -> None:
        """Show the fill on `ring` too (the composer's; dropped with it)."""
        self.changed.connect(ring.show_fraction)
        ring.show_fraction(self.fraction, self.colour, self.bar.toolTip())

    def on_change(self, change: Change) -> None:
        """A leg or a turn ended, a message was sent, the list was replaced, a notice
        about the context came: the fill is read again."""
        match change:
            case StateChanged(state=state):
                leg_ended, turn_ended = state.legs != self._legs, state.turns != self._turns
                self._legs, self._turns = state.legs, state.turns
                if turn_ended:
                    self.refresh()
                elif leg_ended:
                    self.refresh(as_sent=True)
            case EntriesReplaced(reason=reason) if reason != "load":
                self.refresh()
            case EntryAdded(entry=UserEntry() | NoteEntry(note="context")):
                self.refresh()
            case _:
                pass

    def _on_busy(self, busy: bool) -> None:
        self.compact_button.setEnabled(not busy)

    def compact(self) -> None:
        if self._bridge is not None:
            self._bridge.compact()

    def refresh(self, *, as_sent: bool = False) -> None:
        """Read the fill again; `as_sent`: a leg just ended, so the conversation is as the
        loop measured it before the leg went (its count stands, and so does the summary).
        A conversation in the melgui host is measured there: drawn when the host answers."""
        if self._bridge is None:
            return
        session = self._bridge.session
        if isinstance(session, RemoteSession):
            self._asked += 1
            work = self._measured_there(session, self._asked, as_sent)
            self._tasks.spawn(work, what="measuring the context in the melgui host")
            return
        if not isinstance(session, AgentSession):
            return  # an ACP agent keeps its own context
        self.show_measure(measure(session, as_sent=as_sent), as_sent=as_sent)

    async def _measured_there(self, session: RemoteSession, asked: int, as_sent: bool) -> None:
        try:
            answer = await session.ask("context/measure", as_sent=as_sent)
        except (HostGone, OSError, RpcError) as exc:
            if asked == self._asked:
                self._not_measured(f"The melgui host did not measure the context: {exc}")
            return
        if asked == self._asked and self._bridge is not None and self._bridge.session is session:
            self.show_measure(measure_from_json(answer), as_sent=as_sent)

    def show_measure(self, shown: ContextMeasure, *, as_sent: bool = False) -> None:
        """Draw `shown` (measured here, or where the conversation runs)."""
        window, used, total = shown.window, shown.used, shown.total
        self.tokens.setText(
            f"This turn {short(shown.turn.total_tokens)} · "
            f"In all {short(total.total_tokens)}"
            + (f" · cost {total.cost:.4f}" if total.cost is not None else "")
        )
        self.fraction = shown.fraction
        if window.tokens is None or self.fraction is None:
            self.bar.setValue(0)
            self.bar.setFormat(f"Context ~{short(used)} / unknown")
            color = self.colors.muted
        else:
            self.bar.setValue(min(FULL_SCALE, int(self.fraction * FULL_SCALE)))
            guess = "?" if window.source == "guess" else ""
            self.bar.setFormat(
                f"Context {short(used)} / {short(window.tokens)}{guess} ({self.fraction:.0%})"
            )
            color = (
                self.colors.ok
                if self.fraction < 0.6
                else self.colors.warn
                if self.fraction < shown.limit
                else self.colors.error
            )
        self.words.setText(self.bar.format())
        self.bar.setStyleSheet(
            f"QProgressBar {{ border: none; border-radius: {RADIUS_S // 2}px; "
            f"background: {self.colors.muted_bg}; }}"
            f"QProgressBar::chunk {{ background: {color}; border-radius: {RADIUS_S // 2}px; }}"
        )
        lines = [
            f"Window: {window.label} tokens — {window.detail}",
            f"Next request: about {used:,} tokens "
            + ("(calibrated on the server's counts)" if shown.calibrated else "(estimated)"),
            f"This turn: {usage_text(shown.turn)}",
            f"Conversation: {usage_text(total)}",
            "Cost: "
            + (f"{total.cost:.6f}" if total.cost is not None else "unknown (not reported)"),
        ]
        if not shown.reported:
            lines.append("The server has not reported token usage.")
        if shown.warning:
            lines.append(f"⚠ {shown.warning}")
        lines.append("Click for what the tokens are spent on, and the pinned facts.")
        self.bar.setToolTip("\n".join(lines))
        self.tokens.setToolTip("\n".join(lines[2:5]))
        self.words.setToolTip(self.bar.toolTip())
        self.colour = color
        self.changed.emit(self.fraction, color, self.bar.toolTip())
        if not as_sent:
            self.summary_button.setVisible(shown.has_summary)

    def _not_measured(self, why: str) -> None:
        """The host could not be asked: no fill is shown, and the tooltip says why."""
        self.fraction = None
        self.bar.setValue(0)
        self.bar.setFormat("Context: not measured")
        self.bar.setToolTip(why)
        self.words.setText(self.bar.format())
        self.words.setToolTip(why)
        self.colour = self.colors.muted
        self.changed.emit(None, self.colour, why)

    def edit_summary(self) -> None:
        if self._bridge is None:
            return
        text = summary_text(self._bridge.session.conversation.messages)
        if text is None:
            return
        self.dialog = SummaryEditor(text, self)
        self.dialog.accepted.connect(self._save_summary)
        self.dialog.show()

    def _save_summary(self) -> None:
        if self._bridge is None or self.dialog is None:
            return
        session = self._bridge.session
        if session.busy:  # a turn runs: keep the edit open until it ends
            self.dialog.show()
            return
        edited = with_summary(session.conversation.messages, self.dialog.editor.toPlainText())
        session.branch(edited, "edit", "The compaction summary was edited.")
        self.refresh()


class SummaryEditor(QDialog):
    """The compaction summary, editable; Save replaces it (the old one stays in history)."""

    def __init__(self, text: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWindowTitle("Compaction summary")
        self.resize(*DIALOG_METER)
        note = QLabel(
            "What the model keeps of the older conversation. Edit it and Save: the next "
            "request carries your version; the original stays in history.",
            self,
        )
        note.setWordWrap(True)
        self.editor = QPlainTextEdit(self)
        self.editor.setPlainText(text)
        buttons = QDialogButtonBox(
            QDialogButtonBox.StandardButton.Save | QDialogButtonBox.StandardButton.Cancel, self
        )
        buttons.accepted.connect(self.accept)
        buttons.rejected.connect(self.reject)
        layout = QVBoxLayout(self)
        layout.addWidget(note)
        layout.addWidget(self.editor, 1)
        layout.addWidget(buttons)
