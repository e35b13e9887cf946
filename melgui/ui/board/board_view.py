"""The agents board: one row per agent (state, branch, files changed, tokens, and where
its changes overlap another worker's: shared files, conflicts to be).

Clicking a row (or Enter on it) emits `focusRequested(key)`: the window brings that
agent's pane forward, and its waiting approval if it has one.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QBrush, QColor, QHideEvent, QShowEvent
from PySide6.QtWidgets import (
    QHeaderView,
    QLabel,
    QTreeWidget,
    QTreeWidgetItem,
    QVBoxLayout,
    QWidget,
)

from melgui.core.protocol.views.board_rows import AgentRow, BoardFeed
from melgui.ui.board.cells import COLUMNS, STATE_COLOUR, cells
from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_S, SPACE_XS
from melgui.ui.runtime.theme import LIGHT, Colors

KEY_ROLE = Qt.ItemDataRole.UserRole
AGE_REFRESH_MS = 30_000  # "since 14:02 (3 min)" stays true


class BoardView(QWidget):
    """Shows `board`; redraws when it changes. Emits `focusRequested(key)`."""

    focusRequested = Signal(str)

    def __init__(
        self, board: BoardFeed, parent: QWidget | None = None, colors: Colors = LIGHT
    ) -> None:
        super().__init__(parent)
        self.board = board
        self.colors = colors
        self.setObjectName("agentsBoard")
        self.summary = QLabel(self)
        self.summary.setContentsMargins(SPACE_S, SPACE_XS, SPACE_S, 0)
        self.tree = QTreeWidget(self)
        self.tree.setColumnCount(len(COLUMNS))
        self.tree.setHeaderLabels(list(COLUMNS))
        self.tree.setRootIsDecorated(False)
        self.tree.setUniformRowHeights(True)
        self.tree.setAlternatingRowColors(True)
        self.tree.setAccessibleName("Agents")
        header = self.tree.header()
        header.setStretchLastSection(False)
        header.setSectionResizeMode(0, QHeaderView.ResizeMode.Stretch)
        for column in range(1, len(COLUMNS)):
            header.setSectionResizeMode(column, QHeaderView.ResizeMode.ResizeToContents)
        self.tree.itemClicked.connect(self._activated)
        self.tree.itemActivated.connect(self._activated)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACE_2XS)
        layout.addWidget(self.summary)
        layout.addWidget(self.tree, 1)
        # The board is followed while shown (hidden, it redraws when shown again: a row's
        # file count asks git), so a hidden board costs an agent's changes nothing.
        self._following: list[Callable[[], None]] = []  # how to stop: one while shown
        self._pending = False
        self._ages = QTimer(self)
        self._ages.setInterval(AGE_REFRESH_MS)
        self._ages.timeout.connect(self.refresh)
        self.destroyed.connect(lambda _obj=None, offs=self._following: [off() for off in offs])
        self.refresh()

    def _board_changed(self) -> None:
        # Many events arrive per leg: redraw once, after them.
        if not self._pending and self.isVisible():
            self._pending = True
            QTimer.singleShot(0, self.refresh)

    def showEvent(self, event: QShowEvent) -> None:
        super().showEvent(event)
        if not self._following:
            self._following.append(self.board.on_change(self._board_changed))
        self._ages.start()
        self.refresh()

    def hideEvent(self, event: QHideEvent) -> None:
        super().hideEvent(event)
        while self._following:
            self._following.pop()()
        self._ages.stop()

    def refresh(self) -> None:
        self._pending = False
        if not self.isVisible():
            return
        rows = self.board.rows()
        now = time.time()
        if [row.key for row in rows] != self._keys():
            self.tree.clear()  # agents came or went: build the rows again
            for row in rows:
                item = QTreeWidgetItem()
                item.setData(0, KEY_ROLE, row.key)
                item.setToolTip(0, "Click to show this agent's pane")
                for column in (3, 4):
                    item.setTextAlignment(column, Qt.AlignmentFlag.AlignRight)
                self.tree.addTopLevelItem(item)
        for index, row in enumerate(rows):
            shown = self.tree.topLevelItem(index)
            if shown is None:
                continue
            item = shown
            texts = cells(row, now)
            for column, value in enumerate(texts):
                if item.text(column) != value:
                    item.setText(column, value)
            item.setForeground(1, QBrush(QColor(STATE_COLOUR[row.state])))
            item.setToolTip(1, row.detail or texts[1])
            self._show_overlap(item, row.overlaps, row.conflicts)
        waiting = sum(row.waiting for row in rows)
        running = sum(row.state == "running" for row in rows)
        text = f"{len(rows)} agent{'s' if len(rows) != 1 else ''} · {running} running"
        text += f" · <b>{waiting} waiting for you</b>" if waiting else ""
        self.summary.setText(text + _overlap_summary(rows))

    def _show_overlap(self, item: QTreeWidgetItem, lines: tuple[str, ...], conflicts: int) -> None:
        column = len(COLUMNS) - 1
        colour = (
            self.colors.error if conflicts else self.colors.warn if lines else self.colors.muted
        )
        item.setForeground(column, QBrush(QColor(colour)))
        item.setToolTip(column, "\n".join(lines) or "No file shared with another worker")

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.refresh()

    def _keys(self) -> list[object]:
        items = (self.tree.topLevelItem(i) for i in range(self.tree.topLevelItemCount()))
        return [item.data(0, KEY_ROLE) for item in items if item is not None]

    def selected_key(self) -> str:
        items = self.tree.selectedItems()
        return str(items[0].data(0, KEY_ROLE)) if items else ""

    def item(self, key: str) -> QTreeWidgetItem | None:
        for index in range(self.tree.topLevelItemCount()):
            item = self.tree.topLevelItem(index)
            if item is not None and item.data(0, KEY_ROLE) == key:
                return item
        return None

    def _activated(self, item: QTreeWidgetItem, _column: int = 0) -> None:
        key = item.data(0, KEY_ROLE)
        if isinstance(key, str):
            self.focusRequested.emit(key)


def _overlap_summary(rows: list[AgentRow]) -> str:
    """ " · ⚠ 2 workers' changes overlap (1 conflict to be)", "" when none do."""
    overlapping = [row for row in rows if row.overlap]
    if not overlapping:
        return ""
    conflicts = sum(row.conflicts for row in overlapping) // 2  # each counted on both sides
    text = f" · <b>⚠ {len(overlapping)} workers' changes overlap"
    if conflicts:
        text += f" ({conflicts} conflict{'s' if conflicts != 1 else ''} to be)"
    return text + "</b>"
