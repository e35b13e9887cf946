"""A strip across the window showing the oldest waiting approval, so nothing waits unseen."""

from __future__ import annotations

import html
from collections.abc import Callable

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from melgui.core.protocol.calls import summarize
from melgui.ui.approvals.approval_controls import ApprovalControls
from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.approvals.command_parts import command_judgement, parts_summary_html
from melgui.ui.runtime.look.tokens import SPACE_S
from melgui.ui.runtime.theme import Colors


class ApprovalBar(QFrame):
    showRequested = Signal(str, str)  # (source, call id): open it in its inspector

    def __init__(self, queue: ApprovalQueue, colors: Colors, parent: QWidget | None = None):
        super().__init__(parent)
        self.queue = queue
        self.colors = colors
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Approval needed")
        self.label = QLabel(self)
        self.label.setTextFormat(Qt.TextFormat.RichText)
        self.label.setWordWrap(True)
        self.parts = QLabel(self)  # a command's parts: what each rule matched, what is asked
        self.parts.setTextFormat(Qt.TextFormat.RichText)
        self.parts.setWordWrap(True)
        self.parts.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.count = QLabel(self)  # every approval waiting, from any pane
        self.count.setObjectName("approvalCount")
        self.count.setAccessibleName("Approvals waiting")
        self.count.hide()
        self.show_button = QPushButton("Show", self)
        self.show_button.setAccessibleName("Show the call in its inspector")
        self.show_button.clicked.connect(self._show)
        self.controls = ApprovalControls(self, stacked=True)  # the reason gets a full line
        # What a tool says of itself (an MCP server's name and annotations); set by the window.
        self.tool_notes: Callable[[str], str] | None = None
        top = QHBoxLayout()
        top.addWidget(self.label, 1)
        top.addWidget(self.count)
        top.addWidget(self.show_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_S, SPACE_S, SPACE_S, SPACE_S)
        layout.addLayout(top)
        layout.addWidget(self.parts)
        layout.addWidget(self.controls)
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
        self.controls.set_request(request)
        if request is None:
            return
        c = self.colors
        more = len(self.queue) - 1
        waiting = f" — {more} more waiting" if more > 0 else ""
        summary = summarize(request.call.name, request.arguments, 100)
        judgement = command_judgement(request)
        self.parts.setVisible(judgement is not None)
        if judgement is not None:
            self.parts.setText(parts_summary_html(judgement, c, sandbox=judgement.sandboxed))
        notes = self.tool_notes(request.call.name) if self.tool_notes is not None else ""
        if notes:
            summary += f"  [{notes}]"
        self.label.setText(
            f'<span style="color:{c.pending}">◆ Approval needed</span> '
            f"<b>{html.escape(request.call.name)}</b> "
            f'<span style="font-family:monospace">{html.escape(summary)}</span> '
            f'<span style="color:{c.muted}">from {html.escape(request.source)}{waiting}</span>'
        )
        self._fit()

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._fit()

    def _fit(self) -> None:
        """Word-wrapped labels: ask the layout how tall they are at this width."""
        layout = self.layout()
        if layout is not None and self.width() > 0:
            height = layout.totalHeightForWidth(self.width())
            if height > 0 and height != self.minimumHeight():
                self.setMinimumHeight(height)

    def _show(self) -> None:
        request = self.queue.first()
        if request is not None:
            self.showRequested.emit(request.source, request.call.id)
