"""Plans the model wrote with write_plan, rendered as Markdown, newest selected, with
**Approve and start** (plan mode off, the plan sent as the next message) and **Revise**
(the comment typed beside it goes back, plan mode stays on)."""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QTextBrowser,
    QVBoxLayout,
    QWidget,
)

from melgui.ui.chat.blocks.segment_html import SegmentRenderer
from melgui.ui.runtime.theme import Colors


class PlansPanel(QWidget):
    """`sink(title, markdown)` is a PlanSink for the workspace tools; safe from any thread."""

    _arrived = Signal(str, str)
    approved = Signal(str, str)  # title, markdown
    revised = Signal(str, str)  # title, the person's comment

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._renderer = SegmentRenderer(colors)
        self.plans: list[tuple[str, str]] = []
        self.picker = QComboBox(self)
        self.view = QTextBrowser(self)
        self.view.setOpenExternalLinks(False)
        self.view.setPlaceholderText("Plans the agent writes with write_plan appear here.")
        self.state = QLabel(self)
        self.comment = QLineEdit(self)
        self.comment.setPlaceholderText("What to change in the plan…")
        self.comment.setAccessibleName("Comment on the plan")
        self.comment.returnPressed.connect(self._revise)
        self.approve_button = QPushButton("Approve and start", self)
        self.approve_button.setToolTip("Plan mode off; the agent carries out this plan")
        self.approve_button.clicked.connect(self._approve)
        self.revise_button = QPushButton("Revise", self)
        self.revise_button.setToolTip("Send the comment back; plan mode stays on")
        self.revise_button.clicked.connect(self._revise)
        answer = QHBoxLayout()
        answer.addWidget(self.comment, 1)
        answer.addWidget(self.revise_button)
        answer.addWidget(self.approve_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.picker)
        layout.addWidget(self.state)
        layout.addWidget(self.view, 1)
        layout.addLayout(answer)
        self.picker.currentIndexChanged.connect(self._show)
        self._arrived.connect(self.add_plan)
        self.picker.hide()
        self.answered: dict[int, str] = {}  # plan index -> "approved" or "revised"
        self._answerable()

    def sink(self, title: str, markdown: str) -> None:
        self._arrived.emit(title, markdown)

    def add_plan(self, title: str, markdown: str) -> None:
        self.plans.append((title, markdown))
        self.picker.addItem(title)
        self.picker.setVisible(len(self.plans) > 1)
        self.picker.setCurrentIndex(len(self.plans) - 1)
        self._show(len(self.plans) - 1)

    def clear(self) -> None:
        """Forget the shown plans (another conversation is opened)."""
        self.plans.clear()
        self.answered.clear()
        self.picker.clear()
        self.picker.hide()
        self.view.clear()
        self._answerable()

    def set_colors(self, colors: Colors) -> None:
        self._renderer = SegmentRenderer(colors)
        self._show(self.picker.currentIndex())

    def _show(self, index: int) -> None:
        self._answerable()
        if not 0 <= index < len(self.plans):
            self.view.clear()
            return
        title, markdown = self.plans[index]
        self.view.setHtml(f"<h2>{html.escape(title)}</h2>{self._renderer.document(markdown)}")

    def awaiting(self) -> bool:
        """The shown plan is the newest and nobody answered it yet."""
        index = self.picker.currentIndex()
        return 0 <= index == len(self.plans) - 1 and index not in self.answered

    def _answerable(self) -> None:
        waiting = self.awaiting()
        for widget in (self.approve_button, self.revise_button, self.comment):
            widget.setEnabled(waiting)
        index = self.picker.currentIndex()
        if waiting:
            self.state.setText("<b>Awaiting your approval</b>: approve it, or say what to change.")
        elif index in self.answered:
            self.state.setText(f"This plan was {self.answered[index]}.")
        else:
            self.state.setText("")
        self.state.setVisible(bool(self.state.text()))

    def _approve(self) -> None:
        if self.awaiting():
            index = self.picker.currentIndex()
            self.answered[index] = "approved"
            self._answerable()
            self.approved.emit(*self.plans[index])

    def _revise(self) -> None:
        comment = self.comment.text().strip()
        if not self.awaiting() or not comment:
            self.comment.setFocus()
            return
        index = self.picker.currentIndex()
        self.answered[index] = "sent back to revise"
        self.comment.clear()
        self._answerable()
        self.revised.emit(self.plans[index][0], comment)
