"""Splitters whose handles can be hit: HANDLE_WIDTH pixels wide, a hairline that shows
the accent while the pointer is over it, and a double-click that resets the split.

`Splitter.reset` is what a double-click on any of its handles does: by default every
part gets an equal share; an owner with its own idea of the split (the window's chat
beside the panes) sets its own.
"""

from __future__ import annotations

from collections.abc import Callable

from PySide6.QtCore import QEvent, Qt
from PySide6.QtGui import QMouseEvent, QPainter, QPaintEvent, QPalette
from PySide6.QtWidgets import QSplitter, QSplitterHandle, QWidget

HANDLE_WIDTH = 8
LINE_WIDTH = 1
HOVER_LINE_WIDTH = 2


class SplitterHandle(QSplitterHandle):
    """A wide handle drawn as a centred hairline, in the accent under the pointer."""

    def __init__(self, orientation: Qt.Orientation, parent: QSplitter) -> None:
        super().__init__(orientation, parent)
        self.setAttribute(Qt.WidgetAttribute.WA_Hover)
        self.hovered = False

    def event(self, event: QEvent) -> bool:
        if event.type() in (QEvent.Type.HoverEnter, QEvent.Type.HoverLeave):
            self.hovered = event.type() == QEvent.Type.HoverEnter
            self.update()
        return super().event(event)

    def paintEvent(self, _event: QPaintEvent) -> None:
        role = QPalette.ColorRole.Highlight if self.hovered else QPalette.ColorRole.Mid
        width = HOVER_LINE_WIDTH if self.hovered else LINE_WIDTH
        painter = QPainter(self)
        rect = self.rect()
        if self.orientation() == Qt.Orientation.Horizontal:  # side by side: a vertical line
            x = rect.center().x() - width // 2
            painter.fillRect(x, rect.top(), width, rect.height(), self.palette().color(role))
        else:
            y = rect.center().y() - width // 2
            painter.fillRect(rect.left(), y, rect.width(), width, self.palette().color(role))
        painter.end()

    def mouseDoubleClickEvent(self, event: QMouseEvent) -> None:
        splitter = self.splitter()
        if isinstance(splitter, Splitter) and event.button() == Qt.MouseButton.LeftButton:
            splitter.reset()
            event.accept()
            return
        super().mouseDoubleClickEvent(event)


class Splitter(QSplitter):
    """A QSplitter with wide, hoverable handles; a double-click on one calls `reset`."""

    def __init__(self, orientation: Qt.Orientation, parent: QWidget | None = None) -> None:
        super().__init__(orientation, parent)
        self.setHandleWidth(HANDLE_WIDTH)
        self.reset: Callable[[], None] = self.share_equally

    def createHandle(self) -> QSplitterHandle:
        return SplitterHandle(self.orientation(), self)

    def share_equally(self) -> None:
        sizes = self.sizes()
        total = sum(sizes)
        if len(sizes) > 1 and total > 0:
            self.setSizes([total // len(sizes)] * len(sizes))
