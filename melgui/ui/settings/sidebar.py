"""Settings' categories as a sidebar: a QTabWidget (its pages, `addTab`, `setCurrentWidget`
all as before) whose tabs stand on the left as plain rows of words, not rotated tabs."""

from __future__ import annotations

from PySide6.QtCore import QRect, QSize, Qt
from PySide6.QtGui import QColor, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QStyle, QStyleOptionTab, QTabBar, QTabWidget, QWidget

from melgui.ui.runtime.look.tokens import CONTROL_H, RADIUS_S, SIDEBAR_W, SPACE_M, SPACE_S, SPACE_XS


class SidebarBar(QTabBar):
    """Rows of words, the chosen one on the selection's tint."""

    def tabSizeHint(self, index: int) -> QSize:
        words = self.fontMetrics().horizontalAdvance(self.tabText(index))
        return QSize(max(SIDEBAR_W, words + 2 * SPACE_M), CONTROL_H)

    def minimumTabSizeHint(self, index: int) -> QSize:
        return self.tabSizeHint(index)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        palette = self.palette()
        for index in range(self.count()):
            rect = self.tabRect(index).adjusted(SPACE_XS, 1, -SPACE_XS, -1)
            option = QStyleOptionTab()
            self.initStyleOption(option, index)
            chosen = index == self.currentIndex()
            hovered = bool(option.state & QStyle.StateFlag.State_MouseOver)
            if chosen or hovered:
                role = QPalette.ColorRole.Highlight if chosen else QPalette.ColorRole.AlternateBase
                painter.setPen(Qt.PenStyle.NoPen)
                painter.setBrush(palette.color(role))
                painter.drawRoundedRect(rect, RADIUS_S, RADIUS_S)
            painter.setPen(QColor(palette.color(QPalette.ColorRole.WindowText)))
            words = QRect(rect).adjusted(SPACE_S, 0, -SPACE_S, 0)
            align = Qt.AlignmentFlag.AlignVCenter | Qt.AlignmentFlag.AlignLeft
            painter.drawText(words, int(align), self.tabText(index))
        painter.end()


class SidebarPages(QTabWidget):
    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabBar(SidebarBar(self))
        self.setTabPosition(QTabWidget.TabPosition.West)
        self.setDocumentMode(True)
        self.setAccessibleName("Settings categories")
