"""Paints a history row: the title, elided, and when it last changed, muted, on the right."""

from __future__ import annotations

from PySide6.QtCore import QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QPainter, QPalette
from PySide6.QtWidgets import QStyle, QStyledItemDelegate, QStyleOptionViewItem

from melgui.ui.history.model import UPDATED_ROLE

GAP = 8


class ConversationRowDelegate(QStyledItemDelegate):
    def paint(
        self,
        painter: QPainter,
        option: QStyleOptionViewItem,
        index: QModelIndex | QPersistentModelIndex,
    ) -> None:
        when = str(index.data(UPDATED_ROLE) or "")
        item = QStyleOptionViewItem(option)
        self.initStyleOption(item, index)
        item.text = ""
        style = item.widget.style() if item.widget is not None else None
        if style is not None:
            style.drawControl(QStyle.ControlElement.CE_ItemViewItem, item, painter, item.widget)
        rect = option.rect.adjusted(6, 0, -6, 0)
        metrics = option.fontMetrics
        when_width = metrics.horizontalAdvance(when)
        selected = bool(option.state & QStyle.StateFlag.State_Selected)
        palette = option.palette
        text_role = QPalette.ColorRole.HighlightedText if selected else QPalette.ColorRole.Text
        title = metrics.elidedText(
            str(index.data() or ""), Qt.TextElideMode.ElideRight, rect.width() - when_width - GAP
        )
        painter.save()
        painter.setPen(palette.color(text_role))
        align = Qt.AlignmentFlag.AlignVCenter
        painter.drawText(rect, align | Qt.AlignmentFlag.AlignLeft, title)
        if not selected:
            painter.setPen(palette.color(QPalette.ColorRole.PlaceholderText))
        painter.drawText(rect, align | Qt.AlignmentFlag.AlignRight, when)
        painter.restore()
