"""A composer chip: a pill with an icon, words and a chevron, that opens its menu.

Its words are cut short in the middle (…) to the room it gets, at most CHIP_TEXT_MAX, so
a long model id never pushes the send button out of a narrow composer; the tooltip and
the accessible description keep them whole.
"""

from __future__ import annotations

import math

from PySide6.QtCore import QSize, Qt
from PySide6.QtGui import QFontMetricsF, QPaintEvent
from PySide6.QtWidgets import (
    QSizePolicy,
    QStyle,
    QStyleOptionToolButton,
    QStylePainter,
    QToolButton,
    QWidget,
)

from melgui.ui.runtime.look.icons import icon, name_icon
from melgui.ui.runtime.look.tokens import CHIP_H, CHIP_TEXT_MAX, ICON, Colors

SHORTEST = "mmmm…"  # what a chip still shows when squeezed


class Chip(QToolButton):
    """`name` is its accessible name (what it is); `show_words` says what it holds (its
    whole text; `shown_text` is what fits). The owner gives it its menu."""

    def __init__(self, icon_name: str, name: str, colors: Colors, parent: QWidget) -> None:
        super().__init__(parent)
        self.icon_name = icon_name
        self.words_shown = True  # False: its icon and chevron alone (`show_words_drawn`)
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
        self.setText(words)
        self.setAccessibleDescription(words)

    def show_words_drawn(self, shown: bool) -> None:
        """Draw the words (True) or only the icon and chevron (False: the words stay in the
        tooltip and the accessible description)."""
        if shown != self.words_shown:
            self.words_shown = shown
            self.updateGeometry()
            self.update()

    def words_width(self) -> int:
        """What the words add to the chip's width, at most CHIP_TEXT_MAX: their advance in
        whole pixels rounded up (rounded to the nearest, as QFontMetrics does, "Model" got
        38 px of its 38.4 and was drawn "M…l" in a chip sized for it)."""
        advance = QFontMetricsF(self.font()).horizontalAdvance(self.text())
        return min(math.ceil(advance), CHIP_TEXT_MAX)

    def shown_text(self) -> str:
        """The words as drawn: cut in the middle to the room the chip has now."""
        if not self.words_shown:
            return ""
        room = min(max(0, self.width() - self._chrome()), CHIP_TEXT_MAX)
        return self.fontMetrics().elidedText(self.text(), Qt.TextElideMode.ElideMiddle, room)

    def _chrome(self) -> int:
        """The chip's width without its words: icon, padding, chevron."""
        return super().sizeHint().width() - self.fontMetrics().horizontalAdvance(self.text())

    def sizeHint(self) -> QSize:
        hint = super().sizeHint()
        words = self.words_width() if self.words_shown else 0
        return QSize(self._chrome() + words, hint.height())

    def minimumSizeHint(self) -> QSize:
        hint = self.sizeHint()
        shortest = self._chrome() + self.fontMetrics().horizontalAdvance(SHORTEST)
        return QSize(min(shortest, hint.width()), hint.height())

    def paintEvent(self, event: QPaintEvent) -> None:
        """As QToolButton paints itself, with the words cut to fit (drawn, not set: the
        text stays whole for the size hint, the tooltip and screen readers)."""
        painter = QStylePainter(self)
        option = QStyleOptionToolButton()
        self.initStyleOption(option)
        option.text = self.shown_text()
        painter.drawComplexControl(QStyle.ComplexControl.CC_ToolButton, option)
