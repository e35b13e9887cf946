"""A small line saying which questions wait, from any pane, so nothing waits unseen: the
oldest one's tool and who asks, how many wait in all, and "Go to it", which brings that
call's card forward. The answers themselves are on the card (the one place a person
answers), never here."""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QWidget

from melgui.core.protocol.approval import ApprovalRequest
from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.runtime.look.tokens import SPACE_XS
from melgui.ui.runtime.theme import Colors


class WaitingBar(QFrame):
    showRequested = Signal(str, str)  # (source, call id): bring its card forward

    def __init__(self, queue: ApprovalQueue, colors: Colors, parent: QWidget | None = None):
        super().__init__(parent)
        self.queue = queue
        self.colors = colors
        self.setObjectName("waitingBar")
        self.setAccessibleName("Questions waiting")
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.count = QLabel(self)  # every question waiting, from any pane
        self.count.setObjectName("approvalCount")
        self.count.setAccessibleName("Approvals waiting")
        self.count.hide()
        self.show_button = QPushButton("Go to it", self)
        self.show_button.setProperty("role", "link")
        self.show_button.setAccessibleName("Go to the waiting call's card")
        self.show_button.setToolTip("Its card in the chat, where you answer it")
        self.show_button.clicked.connect(self.show_next)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE_XS, 0, SPACE_XS, 0)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.count)
        layout.addWidget(self.show_button)
        queue.changed.connect(self.refresh)
        self.refresh()

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.refresh()

    def set_count(self, waiting: int) -> None:
        """Show how many approvals wait in all (melgui.ui.notifications keeps it current)."""
        self.count.setVisible(waiting > 0)
        self.count.setText(
            f"<span style='background:{self.colors.badge};color:{self.colors.on_accent}'>"
            f"&nbsp;{waiting}"
            f"&nbsp;waiting&nbsp;</span>"
        )

    def refresh(self) -> None:
        request = self.queue.first()
        self.setVisible(request is not None)
        if request is None:
            return
        c = self.colors
        more = len(self.queue) - 1
        waiting = f" — {more} more waiting" if more > 0 else ""
        self.label.setText(
            f'<span style="color:{c.pending}">◆ Approval needed</span> '
            f"<b>{html.escape(request.call.name)}</b> "
            f'<span style="color:{c.muted}">from {html.escape(request.source)}{waiting} · '
            "answer it on its card</span>"
        )

    def first(self) -> ApprovalRequest | None:
        return self.queue.first()

    def show_next(self) -> None:
        """Bring the oldest waiting call's card forward, in its pane."""
        request = self.queue.first()
        if request is not None:
            self.showRequested.emit(request.source, request.call.id)
