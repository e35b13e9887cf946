"""Paints a history row on two lines: the title across the whole width (elided only at
its end), and under it, muted, when it last changed. On one line a narrow sidebar left
the title a word or two ("Please …") beside the time."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, QRect, QSize, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from melgui.ui.history.model import UPDATED_ROLE

PADDING = 6
Index = QModelIndex | QPersistentModelIndex


class ConversationRowDelegate(QStyledItemDelegate):
    def title_for(self, option: QStyleOptionViewItem, index: Index) -> str:
        """The title as the row shows it at `option.rect`'s width."""
        width = option.rect.width() - 2 * PADDING
        return option.fontMetrics.elidedText(
            str(index.data() or ""), Qt.TextElideMode.ElideRight, width
        )

    def sizeHint(self, option: QStyleOptionViewItem, index: Index) -> QSize:
        line = option.fontMetrics.height()
        return QSize(option.rect.width(), 2 * line + PADDING)

    def paint(self, painter: QPainter, option: QStyleOptionViewItem, index: Index) -> None:
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        item.text = ""
        style = item.widget.style() if item.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, item.widget)
        line = option.fontMetrics.height()
        rect = option.rect.adjusted(PADDING, PADDING // 2, -PADDING, 0)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        left = Qt.AlignmentFlag.AlignLeft | Qt.AlignmentFlag.AlignTop
        painter.save()
        painter.setPen(palette.color(text_role))
        painter.drawText(
            QRect(rect.x(), rect.y(), rect.width(), line), left, self.title_for(option, index)
        )
        if not selected:
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        when = str(index.data(UPDATED_ROLE) or "")
        painter.drawText(QRect(rect.x(), rect.y() + line, rect.width(), line), left, when)
        painter.restore()
