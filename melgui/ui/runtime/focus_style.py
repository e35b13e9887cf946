"""Fusion with a focus ring a person can find: a 2-pixel line in the accent colour round
the focused button, field or list row (Fusion's own is a faint tint of the frame)."""

from __future__ import annotations

from PySide6.QtCore import QRectF, Qt
from PySide6.QtGui import QColor, QPainter, QPen
from PySide6.QtWidgets import QProxyStyle, QStyle, QStyleFactory, QStyleOption, QWidget

PE = QStyle.PrimitiveElement
RINGED = (PE.PE_PanelButtonCommand, PE.PE_PanelButtonTool, PE.PE_FrameLineEdit)


class FocusRingStyle(QProxyStyle):
    def __init__(self, accent: str) -> None:
        super().__init__(QStyleFactory.create("Fusion"))
        self._pen = QPen(QColor(accent), 2)

    def drawPrimitive(
        self,
        element: QStyle.PrimitiveElement,
        option: QStyleOption,
        painter: QPainter,
        widget: QWidget | None = None,
    ) -> None:
        focused = bool(option.state & QStyle.StateFlag.State_HasFocus)
        if element == PE.PE_FrameFocusRect:
            self._ring(option, painter, radius=2)  # rows of lists, check boxes, tabs
            return
        super().drawPrimitive(element, option, painter, widget)
        if focused and element in RINGED:
            self._ring(option, painter, radius=3)

    def _ring(self, option: QStyleOption, painter: QPainter, radius: float) -> None:
        painter.save()
        painter.setRenderHint(QPainter.RenderHint.Antialiasing)
        painter.setPen(self._pen)
        painter.setBrush(Qt.BrushStyle.NoBrush)
        rect = QRectF(option.rect).adjusted(1, 1, -1, -1)
        painter.drawRoundedRect(rect, radius, radius)
        painter.restore()
