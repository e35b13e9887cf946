"""The list model behind the history sidebar: conversation summaries, newest first."""

from __future__ import annotations

import time
from typing import Any

from PySide6.QtCore import QAbstractListModel, QModelIndex, QPersistentModelIndex, Qt, Signal

from melgui.core.store import ConversationSummary

Index = QModelIndex | QPersistentModelIndex
ID_ROLE = Qt.ItemDataRole.UserRole + 1
UPDATED_ROLE = Qt.ItemDataRole.UserRole + 2
UNTITLED = "New conversation"


def when(at: float, now: float | None = None) -> str:
    """A short, local time for a list row: 14:03 today, else the date."""
    now = time.time() if now is None else now
    local, today = time.localtime(at), time.localtime(now)
    if local[:3] == today[:3]:
        return time.strftime("%H:%M", local)
    if local.tm_year == today.tm_year:
        return time.strftime("%d %b", local)
    return time.strftime("%Y-%m-%d", local)


class ConversationListModel(QAbstractListModel):
    """Rows are ConversationSummary; editing a title asks for a rename (renameRequested)."""

    renameRequested = Signal(str, str)  # id, new title

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: list[ConversationSummary] = []
        self._there: frozenset[str] = frozenset()
        self.where = ""  # the host whose history the rows `there` are in

    def set_rows(
        self, rows: list[ConversationSummary], there: frozenset[str] = frozenset(), where: str = ""
    ) -> None:
        """`there`: the ids of the rows kept in the history of melgui's host `where` (a
        remote folder's, whose main conversation runs there), not this machine's."""
        self.beginResetModel()
        self._rows = list(rows)
        self._there, self.where = there, where
        self.endResetModel()

    def is_there(self, cid: str) -> bool:
        return cid in self._there

    def rows(self) -> list[ConversationSummary]:
        return list(self._rows)

    def row_of(self, cid: str) -> int:
        return next((i for i, row in enumerate(self._rows) if row.id == cid), -1)

    def summary_at(self, row: int) -> ConversationSummary | None:
        return self._rows[row] if 0 <= row < len(self._rows) else None

    def rowCount(self, parent: Index = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def data(self, index: Index, role: int = Qt.ItemDataRole.DisplayRole) -> Any:
        summary = self.summary_at(index.row()) if index.isValid() else None
        if summary is None:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return summary.title or UNTITLED
        if role == Qt.ItemDataRole.EditRole:
            return summary.title
        if role == Qt.ItemDataRole.ToolTipRole:
            started = time.strftime("%Y-%m-%d %H:%M", time.localtime(summary.created_at))
            changed = when(summary.updated_at)
            said = f"{summary.title or UNTITLED}\nStarted {started} · last change {changed}"
            if self.is_there(summary.id):
                said += f"\nKept in the history of melgui's host on {self.where}"
            return said
        if role == ID_ROLE:
            return summary.id
        if role == UPDATED_ROLE:
            return when(summary.updated_at)
        return None

    def flags(self, index: Index) -> Qt.ItemFlag:
        base = super().flags(index)
        summary = self.summary_at(index.row()) if index.isValid() else None
        if summary is None or self.is_there(summary.id):  # renamed there only
            return base
        return base | Qt.ItemFlag.ItemIsEditable

    def setData(self, index: Index, value: Any, role: int = Qt.ItemDataRole.EditRole) -> bool:
        summary = self.summary_at(index.row()) if index.isValid() else None
        if summary is None or role != Qt.ItemDataRole.EditRole:
            return False
        self.renameRequested.emit(summary.id, str(value))
        return True
