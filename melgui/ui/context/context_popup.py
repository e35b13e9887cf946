"""The context meter's popup: what the next request's tokens are spent on, largest first
(a click on a message shows it in the chat), the conversation's pinned facts, and
Compact, which shows what it would cut and keep before it runs. A conversation in the
melgui host is measured there: the popup shows the breakdown the host sent."""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QScrollArea,
    QVBoxLayout,
    QWidget,
)

from melgui.core.agent.session import AgentSession
from melgui.core.context.breakdown import Breakdown, next_request
from melgui.ui.context.breakdown_view import BreakdownView
from melgui.ui.context.pins_view import Pinned, PinsView
from melgui.ui.runtime.theme import LIGHT, Colors

WIDTH = 560
LIST_HEIGHT = 300


def headline(breakdown: Breakdown, window: int | None) -> str:
    of = f" of a {window:,}-token window" if window else ""
    if breakdown.exact:
        how = "counted by the model's tokenizer"
    elif breakdown.calibrated:
        how = "an estimate, calibrated on the server's own counts"
    else:
        how = "an estimate: no tokenizer counts them, and the server has not reported yet"
    return f"Next request: about {breakdown.total:,} tokens{of} ({how})."


class ContextPopup(QFrame):
    sliceActivated = Signal(object)  # a Slice with a message: show it in the chat
    compactRequested = Signal()

    def __init__(self, colors: Colors = LIGHT, parent: QWidget | None = None) -> None:
        super().__init__(parent, Qt.WindowType.Popup)
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setFixedWidth(WIDTH)
        self.session: Pinned | None = None
        self.title = QLabel("", self)
        self.title.setWordWrap(True)
        self.view = BreakdownView(colors, self)
        self.view.sliceActivated.connect(self.sliceActivated)
        self.area = QScrollArea(self)
        self.area.setWidget(self.view)
        self.area.setWidgetResizable(True)
        self.area.setFrameShape(QFrame.Shape.NoFrame)
        self.area.setFixedHeight(LIST_HEIGHT)
        self.pins = PinsView(None, self)
        self.compact_button = QPushButton("Compact…", self)
        self.compact_button.setToolTip("Summarise the older part; first shows what it would cut")
        self.compact_button.clicked.connect(self.compactRequested)
        self.compact_button.clicked.connect(self.hide)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.compact_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.title)
        layout.addWidget(self.area)
        layout.addWidget(self.pins)
        layout.addLayout(buttons)

    def set_colors(self, colors: Colors) -> None:
        self.view.set_colors(colors)

    def show_session(self, session: AgentSession) -> Breakdown:
        """Fill the popup for `session`'s next request; returns what it shows."""
        breakdown = next_request(session)
        self.show_breakdown(session, breakdown, session.context.window.tokens, session.busy)
        return breakdown

    def show_breakdown(
        self, session: Pinned, breakdown: Breakdown, window: int | None, busy: bool
    ) -> None:
        """Fill the popup with `breakdown` of the next request of a `window`-token model
        (measured here, or where `session` runs) and `session`'s pins."""
        if session is not self.session:
            self.session = session
            self.pins.follow(session)
        self.view.show_breakdown(breakdown)
        self.title.setText(headline(breakdown, window))
        self.compact_button.setEnabled(not busy)

    def open_at(self, anchor: QWidget) -> None:
        """Show above `anchor` (the meter), its right edges aligned, on the screen."""
        self.adjustSize()
        corner = anchor.mapToGlobal(QPoint(anchor.width(), 0))
        point = QPoint(corner.x() - self.width(), corner.y() - self.height() - 4)
        screen = anchor.screen().availableGeometry()
        point.setX(max(screen.left(), min(point.x(), screen.right() - self.width())))
        point.setY(max(screen.top(), point.y()))
        self.move(point)
        self.show()
