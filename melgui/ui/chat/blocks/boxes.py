"""Boxes in the transcript (tool cards, Thinking, the user's messages): one-cell tables."""

from __future__ import annotations

from PySide6.QtGui import (
    QColor,
    QTextCursor,
    QTextDocument,
    QTextFrameFormat,
    QTextLength,
    QTextTable,
    QTextTableFormat,
)

from melgui.ui.runtime.look.tokens import SPACE_M, SPACE_XS
from melgui.ui.runtime.theme import Colors


def insert_box(
    document: QTextDocument, colors: Colors, background: str | None, *, border: int
) -> QTextTable:
    """A full-width one-cell table at the end of `document`, on `background` (None: the
    document's own, which costs nothing to draw)."""
    cursor = QTextCursor(document)
    cursor.movePosition(QTextCursor.MoveOperation.End)
    fmt = QTextTableFormat()
    fmt.setBorder(border)
    fmt.setBorderStyle(QTextFrameFormat.BorderStyle.BorderStyle_Solid)
    fmt.setBorderBrush(QColor(colors.border))
    fmt.setBorderCollapse(True)
    fmt.setCellPadding(SPACE_M)
    fmt.setCellSpacing(0)
    fmt.setMargin(SPACE_XS)
    fmt.setWidth(QTextLength(QTextLength.Type.PercentageLength, 100))
    table = cursor.insertTable(1, 1, fmt)
    if background is None:
        return table
    cell = table.cellAt(0, 0)
    cell_format = cell.format()
    cell_format.setBackground(QColor(background))  # the table's own is not painted
    cell.setFormat(cell_format)
    return table
