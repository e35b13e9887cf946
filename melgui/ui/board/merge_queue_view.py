"""The merge queue as the person sees it: the branches waiting to land on their branch,
what happened to each, and the buttons that start and stop it.

Nothing lands until the person presses Start. "Add finished workers" queues every worker
in its own worktree that has finished (or is idle) with changes; "Send the output to the
worker" gives a branch that failed its tests (when the queue stops on failures) its test
output as a new task.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from PySide6.QtCore import Qt, QTimer
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import (
    QHBoxLayout,
    QHeaderView,
    QLabel,
    QPushButton,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from melgui.core.worktrees.merge_queue.queue import ItemState, MergeQueue, QueueItem
from melgui.core.worktrees.model import Worktree
from melgui.ui.runtime.theme import LIGHT, Colors

COLUMNS = ("Worker", "Branch", "State", "What happened")
KEY_ROLE = Qt.ItemDataRole.UserRole


@dataclass(frozen=True, slots=True)
class Candidate:
    """A worker the queue could take: finished, in its own worktree, with changes."""

    key: str
    name: str
    worktree: Worktree


def _tone(state: ItemState, colors: Colors) -> str:
    if state == "merged":
        return colors.ok
    if state in ("conflict", "refused", "tests failed"):
        return colors.error
    if state == "sent back":
        return colors.warn
    if state in ("rebasing", "testing", "merging"):
        return colors.accent
    return colors.muted


class MergeQueueView(QWidget):
    def __init__(
        self,
        queue: MergeQueue,
        candidates: Callable[[], list[Candidate]],
        describe_tests: Callable[[], str],
        colors: Colors = LIGHT,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.setObjectName("mergeQueue")
        self.queue = queue
        self.candidates = candidates
        self.describe_tests = describe_tests
        self.colors = colors
        self.header = QLabel(self)
        self.header.setWordWrap(True)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setAccessibleName("Merge queue")
        self.tree.setWordWrap(True)
        header = self.tree.header()
        header.setStretchLastSection(True)
        for column in range(len(COLUMNS) - 1):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemSelectionChanged.connect(self._update_buttons)
        self.add_button = self._button("Add finished workers", self.add_finished)
        self.start_button = self._button("Start the queue", self.queue_start)
        self.stop_button = self._button("Stop", lambda: self.queue.stop())
        self.remove_button = self._button("Remove", self.remove_selected)
        self.send_button = self._button("Send the output to the worker", self.send_selected)
        self.note = QLabel(self)
        self.note.setWordWrap(True)
        self.note.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        buttons = QHBoxLayout()
        for button in (self.add_button, self.start_button, self.stop_button):
            buttons.addWidget(button)
        buttons.addStretch(1)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.remove_button)
        layout = QVBoxLayout(self)
        layout.addWidget(self.header)
        layout.addWidget(self.tree, 1)
        layout.addLayout(buttons)
        layout.addWidget(self.note)
        self._pending = False
        off = queue.subscribe(self._queue_changed)
        self.destroyed.connect(lambda _obj=None, off=off: off())
        self.refresh()

    def _button(self, text: str, action: Callable[[], object]) -> QPushButton:
        button = QPushButton(text, self)
        button.clicked.connect(lambda _checked=False: action())
        return button

    def _queue_changed(self) -> None:
        if not self._pending:
            self._pending = True
            QTimer.singleShot(0, self.refresh)

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.refresh()

    # -- the buttons -----------------------------------------------------------------

    def add_finished(self) -> int:
        """Queue every finished worker not already waiting; how many were added."""
        added = 0
        for candidate in self.candidates():
            item = self.queue.item(candidate.key)
            if item is None or item.state not in ("waiting", "rebasing", "testing", "merging"):
                self.queue.add(candidate.key, candidate.name, candidate.worktree)
                added += 1
        if not added:
            self.note.setText(
                "No finished worker with changes to add: a worker is added once it works in "
                "its own worktree, has changed files and has finished its turn."
            )
        return added

    def queue_start(self) -> None:
        if not self.queue.waiting():
            self.note.setText("Nothing waits in the queue: add finished workers first.")
            return
        self.queue.start()

    def selected(self) -> QueueItem | None:
        items = self.tree.selectedItems()
        return self.queue.item(str(items[0].data(0, KEY_ROLE))) if items else None

    def remove_selected(self) -> None:
        item = self.selected()
        if item is not None:
            self.queue.remove(item.key)

    def send_selected(self) -> None:
        item = self.selected()
        if item is not None:
            self.queue.send_back(item.key)

    # -- showing it ------------------------------------------------------------------

    def refresh(self) -> None:
        self._pending = False
        self.header.setText(
            "Finished workers' branches land on your branch one at a time, each rebased on "
            f"what landed before it. {self.describe_tests()} Nothing lands until you start it."
        )
        keys = [item.key for item in self.queue.items]
        shown = [self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount())]
        if [row.data(0, KEY_ROLE) for row in shown if row is not None] != keys:
            selected = self.selected()
            self.tree.clear()
            for item in self.queue.items:
                new = QTreeWidgetItem()
                new.setData(0, KEY_ROLE, item.key)
                self.tree.addTopLevelItem(new)
                if selected is not None and selected.key == item.key:
                    new.setSelected(True)
        for index, item in enumerate(self.queue.items):
            row = self.tree.topLevelItem(index)
            if row is None:
                continue
            texts = (item.name, item.worktree.branch, item.state, item.detail)
            for column, text in enumerate(texts):
                if row.text(column) != text:
                    row.setText(column, text)
            row.setForeground(2, QBrush(QColor(_tone(item.state, self.colors))))
            row.setToolTip(3, item.output[-4000:] or item.detail)
        if self.queue.note:
            self.note.setText(self.queue.note)
        self._update_buttons()

    def _update_buttons(self) -> None:
        running = self.queue.running
        self.start_button.setEnabled(not running and bool(self.queue.waiting()))
        self.stop_button.setEnabled(running)
        item = self.selected()
        self.remove_button.setEnabled(
            item is not None and item.state not in ("rebasing", "testing", "merging")
        )
        self.send_button.setVisible(item is not None and item.state == "tests failed")
