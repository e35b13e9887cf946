"""Plans the model wrote with write_plan, rendered as Markdown, newest selected, with
**Approve and start** (plan mode off, the plan sent as the next message) and **Revise**
(the comment typed beside it goes back, plan mode stays on).

Each plan keeps whose it is: the main conversation's ("main"), a worker's (its pane's
title), answered to that conversation; or an ACP agent's ("", sent through `sink`),
which is its own checklist, shown and not answered."""

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

from melgui.core.thread.changes import Change, EntryAdded
from melgui.core.thread.entries import PlanEntry
from melgui.ui.chat.blocks.segment_html import SegmentRenderer
from melgui.ui.runtime.theme import Colors

MAIN = "main"
SHOWN = ""  # an agent's own checklist: shown, not answered


class PlansPanel(QWidget):
    """`take(source)` follows a conversation's thread for its plans; `sink(title,
    markdown)` takes an ACP agent's checklists, from any thread."""

    _arrived = Signal(str, str)
    approved = Signal(str, str, str)  # source, title, markdown
    revised = Signal(str, str, str)  # source, title, the person's comment

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._renderer = SegmentRenderer(colors)
        self.plans: list[tuple[str, str]] = []  # (title, markdown)
        self.sources: list[str] = []  # whose each plan is
        self.picker = QComboBox(self)
        self.view = QTextBrowser(self)
        self.view.setOpenExternalLinks(False)
        self.view.setPlaceholderText("Plans the agent writes with write_plan appear here.")
        self.state = QLabel(self)
        self.state.setWordWrap(True)
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
        buttons = QHBoxLayout()  # under the comment: the dock is often narrow beside panes
        buttons.addStretch(1)
        buttons.addWidget(self.revise_button)
        buttons.addWidget(self.approve_button)
        answer = QVBoxLayout()
        answer.addWidget(self.comment)
        answer.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.picker)
        layout.addWidget(self.state)
        layout.addWidget(self.view, 1)
        layout.addLayout(answer)
        self.picker.currentIndexChanged.connect(self._show)
        self._arrived.connect(lambda title, markdown: self.add_plan(title, markdown, SHOWN))
        self.picker.hide()
        self.answered: dict[int, str] = {}  # plan index -> "approved" or "revised"
        self._answerable()

    def sink(self, title: str, markdown: str) -> None:
        self._arrived.emit(title, markdown)

    def take(self, source: str, change: Change) -> None:
        """A change of conversation `source`'s thread: a plan it wrote is shown."""
        if isinstance(change, EntryAdded) and isinstance(change.entry, PlanEntry):
            self.add_plan(change.entry.title, change.entry.markdown, source)

    def add_plan(self, title: str, markdown: str, source: str = MAIN) -> None:
        self.plans.append((title, markdown))
        self.sources.append(source)
        self.picker.addItem(title if source in (MAIN, SHOWN) else f"{source}: {title}")
        self.picker.setVisible(len(self.plans) > 1)
        self.picker.setCurrentIndex(len(self.plans) - 1)
        self._show(len(self.plans) - 1)

    def clear(self) -> None:
        """Forget the main conversation's plans (another one is opened); the panes' stay,
        as the panes do."""
        kept = [
            (plan, source, self.answered.get(index))
            for index, (plan, source) in enumerate(zip(self.plans, self.sources, strict=True))
            if source != MAIN
        ]
        self.plans.clear()
        self.sources.clear()
        self.answered.clear()
        self.picker.clear()
        self.picker.hide()
        self.view.clear()
        for (title, markdown), source, answer in kept:
            if answer is not None:
                self.answered[len(self.plans)] = answer
            self.add_plan(title, markdown, source)
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
        source = self.sources[index]
        whose = ""
        if source not in (MAIN, SHOWN):
            whose = f"<p><i>Written by {html.escape(source)}</i></p>"
        self.view.setHtml(
            f"<h2>{html.escape(title)}</h2>{whose}{self._renderer.document(markdown)}"
        )

    def awaiting(self) -> bool:
        """The shown plan is its conversation's newest and nobody answered it yet."""
        index = self.picker.currentIndex()
        if not 0 <= index < len(self.plans) or index in self.answered:
            return False
        source = self.sources[index]
        return source != SHOWN and source not in self.sources[index + 1 :]

    def _answerable(self) -> None:
        waiting = self.awaiting()
        for widget in (self.approve_button, self.revise_button, self.comment):
            widget.setEnabled(waiting)
        index = self.picker.currentIndex()
        if waiting:
            source = self.sources[index]
            whose = f" ({html.escape(source)})" if source != MAIN else ""  # a worker's
            self.state.setText(
                f"<b>Awaiting your approval</b>{whose}: approve it, or say what to change."
            )
        elif 0 <= index < len(self.plans) and self.sources[index] == SHOWN:
            self.state.setText("An agent's own plan, kept up to date as it works.")
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
            self.approved.emit(self.sources[index], *self.plans[index])

    def _revise(self) -> None:
        comment = self.comment.text().strip()
        if not self.awaiting() or not comment:
            self.comment.setFocus()
            return
        index = self.picker.currentIndex()
        self.answered[index] = "sent back to revise"
        self.comment.clear()
        self._answerable()
        self.revised.emit(self.sources[index], self.plans[index][0], comment)
