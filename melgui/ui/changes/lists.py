"""The Changes view's two lists: the branch's commits, and the files with +/- counts."""

from __future__ import annotations

from PySide6.QtCore import Qt
from PySide6.QtGui import QBrush, QColor
from PySide6.QtWidgets import QHeaderView, QTreeWidget, QTreeWidgetItem, QWidget

from melgui.core.worktrees.changes.diff import FileChange
from melgui.core.worktrees.changes.reading import Commit
from melgui.ui.runtime.theme import Colors

SIGILS = {"added": "A", "modified": "M", "deleted": "D", "renamed": "R", "binary": "B"}
PATH_ROLE = Qt.ItemDataRole.UserRole  # a file row's path, in column 1


def make_tree(columns: list[tuple[str, str]], parent: QWidget) -> QTreeWidget:
    """A flat list of (title, widest text) columns; column 1 takes the room left.

    Widths come from the widest text expected, not from measuring every row (which,
    for hundreds of files, stalled the window on each refresh)."""
    tree = QTreeWidget(parent)
    tree.setHeaderLabels([title for title, _widest in columns])
    tree.setRootIsDecorated(False)
    tree.setUniformRowHeights(True)
    tree.setAlternatingRowColors(True)
    header = tree.header()
    header.setStretchLastSection(False)
    metrics = tree.fontMetrics()
    for column, (title, widest) in enumerate(columns):
        header.setSectionResizeMode(column, QHeaderView.ResizeMode.Interactive)
        width = max(metrics.horizontalAdvance(widest), metrics.horizontalAdvance(title))
        header.resizeSection(column, width + 16)
    header.setSectionResizeMode(1, QHeaderView.ResizeMode.Stretch)
    return tree


def commit_item(commit: Commit) -> QTreeWidgetItem:
    item = QTreeWidgetItem([commit.short, commit.subject, commit.author, commit.date])
    item.setToolTip(0, commit.sha)
    item.setToolTip(1, commit.subject)
    return item


def file_item(change: FileChange, colors: Colors) -> QTreeWidgetItem:
    """A file's row: what happened (A/M/D/R/B, orange when not committed), its path, +, −."""
    item = QTreeWidgetItem(
        [SIGILS[change.label], change.path, f"+{change.added}", f"−{change.removed}"]
    )
    item.setData(1, PATH_ROLE, change.path)
    shown = f"{change.old_path} → {change.path}" if change.status == "renamed" else change.path
    note = " · not committed by the worker" if change.uncommitted else ""
    item.setToolTip(1, f"{shown}: {change.label}{note}")
    item.setForeground(2, QBrush(QColor(colors.ok)))
    item.setForeground(3, QBrush(QColor(colors.error)))
    if change.uncommitted:
        item.setForeground(0, QBrush(QColor(colors.pending)))
    return item
