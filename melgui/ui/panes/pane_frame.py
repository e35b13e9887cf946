"""One pane as the person sees it: a header (id, title, state, buttons) over its content."""

from __future__ import annotations

from typing import Any, Protocol, runtime_checkable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QColor, QPainter, QPaintEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QVBoxLayout, QWidget

from melgui.core.terminal.panes import WAITING, PaneInfo, PaneState
from melgui.core.worktrees.model import Worktree
from melgui.ui.changes.view import open_changes
from melgui.ui.runtime.look.tokens import LIGHT, SPACE_2XS, SPACE_S

FOCUS_BORDER = LIGHT.accent
_STATE_COLOURS = {
    "running": LIGHT.ok,
    "waiting": LIGHT.pending,
    "idle": LIGHT.muted,
    "exited": LIGHT.muted,
    "failed": LIGHT.error,
}


@runtime_checkable
class SessionMaker(Protocol):
    """A window that makes sessions (MainWindow is one): a review's read-only worker."""

    def session_factory(
        self,
        role: Any,
        model: str | None = None,
        source: str = "worker",
        worktree: Worktree | None = None,
    ) -> Any: ...


class PaneFrame(QFrame):
    """A pane's chrome. Emits closeRequested / moveToTabRequested with the pane id."""

    closeRequested = Signal(int)
    moveToTabRequested = Signal(int)

    def __init__(self, info: PaneInfo, content: QWidget, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.pane_id = info.id
        self.content = content
        self.setObjectName(f"pane-{info.id}")
        # The focus border is painted (paintEvent), not set by a style sheet: setting one
        # polishes every widget inside again, 15-20 ms per pane, and opening a pane
        # moves the focus (two panes re-styled per pane opened).
        self.setFrameShape(QFrame.Shape.NoFrame)
        self._focused = False
        header = QWidget(self)
        header.setObjectName("paneHeader")
        row = QHBoxLayout(header)
        row.setContentsMargins(SPACE_S, SPACE_2XS, SPACE_2XS, SPACE_2XS)
        row.setSpacing(SPACE_S)
        self.title_label = QLabel(header)
        self.title_label.setTextInteractionFlags(Qt.TextInteractionFlag.NoTextInteraction)
        self.state_label = QLabel(header)
        self.badge = 0  # signals the person has not seen yet (melgui.ui.notifications)
        self.badge_label = QLabel(header)
        self.badge_label.setObjectName("paneBadge")
        self.badge_label.setAccessibleName("Needs you")
        # Its room is kept while it is hidden: a badge that widened the pane's minimum as
        # it came (a turn ended in a pane not looked at) moved the splits of a crowded tab,
        # or sent a pane to a tab of its own, and every chat there laid its whole text out
        # again (tens of ms each, as 8 workers ended their turns).
        keep = self.badge_label.sizePolicy()
        keep.setRetainSizeWhenHidden(True)
        self.badge_label.setSizePolicy(keep)
        self.badge_label.setText(_badge_html(9))  # as wide as a one-digit count, at least
        self.badge_label.setMinimumWidth(self.badge_label.sizeHint().width())
        self.badge_label.hide()
        to_tab = QToolButton(header)
        to_tab.setText("⇱")
        to_tab.setToolTip("Move this pane to its own tab")
        to_tab.setAutoRaise(True)
        to_tab.clicked.connect(lambda: self.moveToTabRequested.emit(self.pane_id))
        # A worker in its own worktree: review and merge what it changed.
        self.changes_button = QToolButton(header)
        self.changes_button.setText("Changes")
        self.changes_button.setToolTip("Review the worker's changes: apply, merge or discard")
        self.changes_button.setAutoRaise(True)
        self.changes_button.clicked.connect(self._open_changes)
        close = QToolButton(header)
        close.setText("✕")
        close.setToolTip("Close this pane (ends its program or worker)")
        close.setAutoRaise(True)
        close.clicked.connect(lambda: self.closeRequested.emit(self.pane_id))
        row.addWidget(self.title_label, 1)
        row.addWidget(self.badge_label)
        row.addWidget(self.state_label)
        row.addWidget(self.changes_button)
        row.addWidget(to_tab)
        row.addWidget(close)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(
            SPACE_2XS, SPACE_2XS, SPACE_2XS, SPACE_2XS
        )  # a 1-pixel border, then 1 pixel of room
        layout.setSpacing(0)
        layout.addWidget(header)
        layout.addWidget(content, 1)
        self.setFocusProxy(content)
        self.show_info(info)

    def show_info(self, info: PaneInfo) -> None:
        self.title = info.title
        self.title_label.setText(f"<b>{info.id}</b>&nbsp;&nbsp;{_escape(info.title)}")
        self.title_label.setToolTip(info.title)
        self.show_state(info.state)

    def show_state(self, state: PaneState) -> None:
        self.changes_button.setVisible(getattr(self.content, "worktree", None) is not None)
        colour = _STATE_COLOURS.get(state.name, LIGHT.muted)
        label = self.state_label
        label.setText(f"<span style='color:{colour}'>● {_escape(state.label)}</span>")
        label.setToolTip(state.label)
        # Its minimum only grows, up to "● waiting for approval" (longer words, a failure's,
        # are cut at the pane's edge; the tooltip says them whole): a minimum that followed
        # the words made a narrow pane's width follow its state back and forth ("running",
        # "idle"), and every chat in that split laid its text out again (tens of ms each
        # for a streamed answer, as 8 workers started and ended their turns).
        most = label.fontMetrics().horizontalAdvance(f"● {WAITING.label}") + SPACE_2XS
        label.setMinimumWidth(min(most, max(label.minimumWidth(), label.sizeHint().width())))

    def set_badge(self, count: int, why: str = "") -> None:
        """Show `count` unseen signals (an approval waiting, a turn ended, a bell); 0 hides."""
        self.badge = max(0, count)
        self.badge_label.setVisible(self.badge > 0)
        if self.badge:  # hidden, it keeps the room of the widest count it showed
            label = self.badge_label
            label.setText(_badge_html(self.badge))
            label.setMinimumWidth(max(label.minimumWidth(), label.sizeHint().width()))
        self.badge_label.setToolTip(why)

    def _open_changes(self) -> None:
        worktree = getattr(self.content, "worktree", None)
        if worktree is None:
            return
        send = getattr(self.content, "send", None)  # the worker pane's: a task for it
        there = getattr(self.content, "worktree_there", None)
        if there is not None:  # on another machine: read and acted on there by its host
            reviewer = getattr(self.content, "reviewer", None)  # its tools read there too
            open_changes(self.window(), worktree, None, reviewer, send, there=there)
            return
        window = self.window()
        reviewer = None
        if isinstance(window, SessionMaker):
            factory = window.session_factory

            def reviewer() -> Any:  # a read-only worker in the worktree reviews it
                return factory("worker", source=f"review of {worktree.branch}", worktree=worktree)

        open_changes(self.window(), worktree, reviewer=reviewer, send_to_worker=send)

    def set_focused(self, focused: bool) -> None:
        self.setProperty("focusedPane", focused)
        if focused != self._focused:
            self._focused = focused
            self.update()

    def paintEvent(self, event: QPaintEvent) -> None:
        super().paintEvent(event)
        if self._focused:
            painter = QPainter(self)
            painter.setPen(QColor(FOCUS_BORDER))
            painter.drawRect(self.rect().adjusted(0, 0, -1, -1))
            painter.end()


def _escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _badge_html(count: int) -> str:
    return (
        f"<span style='background:{LIGHT.badge};color:{LIGHT.on_accent}'>&nbsp;{count}&nbsp;</span>"
    )
