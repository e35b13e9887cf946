"""A composer chip: a pill with an icon, words and a chevron, that opens its menu.

Its words are cut short in the middle (…) to the room it gets, at most CHIP_TEXT_MAX, so
a long model id never pushes the send button out of a narrow composer; the tooltip and
the accessible description keep them whole.
"""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QResizeEvent
from PySide6.QtWidgets import QSizePolicy, QToolButton, QWidget

from melgui.ui.runtime.look.icons import icon, name_icon
from melgui.ui.runtime.look.tokens import CHIP_H, CHIP_TEXT_MAX, ICON, Colors

SHORTEST = "mmmm…"  # what a chip still shows when squeezed


class Chip(QToolButton):
    """`name` is its accessible name (what it is); `show_words` says what it holds. The
    owner gives it its menu."""

    def __init__(self, icon_name: str, name: str, colors: Colors, parent: QWidget) -> None:
        super().__init__(parent)
        self.icon_name = icon_name
        self.words = ""
        self.setProperty("role", "chip")
        self.setToolButtonStyle(Qt.ToolButtonStyle.ToolButtonTextBesideIcon)
        self.set_colors(colors)
        self.setIconSize(QSize(ICON, ICON))
        self.setPopupMode(QToolButton.ToolButtonPopupMode.InstantPopup)
        self.setMinimumHeight(CHIP_H)
        self.setSizePolicy(QSizePolicy.Policy.Preferred, QSizePolicy.Policy.Fixed)
        name_icon(self, name)

    def set_colors(self, colors: Colors) -> None:
        self.setIcon(icon(self.icon_name, colors.muted))

    def show_words(self, words: str) -> None:
        self.words = words
        self.setAccessibleDescription(words)
        self._cut_to(self.width() if self.isVisible() else CHIP_TEXT_MAX)
        self.updateGeometry()

    def _chrome(self) -> int:
        """The chip's width without its words: icon, padding, chevron."""
        return super().sizeHint().width() - self.fontMetrics().horizontalAdvance(self.text())

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        words = min(self.fontMetrics().horizontalAdvance(self.words), CHIP_TEXT_MAX)
        return QSize(self._chrome() + words, hint.height())

    def minimumSizeHint(self) -> QSize:
        words = min(self.fontMetrics().horizontalAdvance(SHORTEST), self.sizeHint().width())
        return QSize(min(self._chrome() + words, self.sizeHint().width()), self.sizeHint().height())

    def resizeEvent(self, event: QResizeEvent) -> None:
        super().resizeEvent(event)
        self._cut_to(event.size().width())

    def _cut_to(self, width: int) -> None:
        room = min(max(0, width - self._chrome()), CHIP_TEXT_MAX)
        text = self.fontMetrics().elidedText(self.words, Qt.TextElideMode.ElideMiddle, room)
        if text != self.text():
            self.setText(text)
