"""The list the prompt box opens for `/` (commands) and `@` (project files).

It floats over the bottom of the transcript, just above the prompt box, and never
takes the keyboard: the box keeps the focus and forwards Up, Down, Enter, Tab and
Escape to it while it is open.
"""

from __future__ import annotations

from PySide6.QtCore import QPoint, Qt, Signal
from PySide6.QtGui import QColor, QPalette
from PySide6.QtWidgets import QListWidget, QListWidgetItem, QWidget

from melgui.ui.runtime.look.tokens import HAIRLINE

MAX_ROWS = 10


class PickerList(QListWidget):
    picked = Signal(str)  # the value of the chosen row

    def __init__(self, parent: QWidget) -> None:
        super().__init__(parent)
        self.setFocusPolicy(Qt.FocusPolicy.NoFocus)
        self.setUniformItemSizes(True)
        self.setHorizontalScrollBarPolicy(Qt.ScrollBarPolicy.ScrollBarAlwaysOff)
        self.setTextElideMode(Qt.TextElideMode.ElideRight)  # a long description ends in …
        self.setObjectName("promptPicker")
        self.itemClicked.connect(lambda item: self.picked.emit(item.data(Qt.ItemDataRole.UserRole)))
        self.hide()

    def show_items(self, rows: list[tuple[str, str]], anchor: QWidget) -> None:
        """Show (value, text) rows above `anchor`; hide when there are none."""
        self.clear()
        for value, text in rows:
            item = QListWidgetItem(text, self)
            item.setData(Qt.ItemDataRole.UserRole, value)
        if not rows:
            self.hide()
            return
        self.setCurrentRow(0)
        parent = self.parentWidget()
        assert parent is not None
        self.setStyleSheet(_opaque_style(parent.palette()))  # its own holds the last style
        row_height = max(self.sizeHintForRow(0), 18)
        height = row_height * min(len(rows), MAX_ROWS) + 2 * self.frameWidth() + 4
        top_left = anchor.mapTo(parent, QPoint(0, 0))
        width = min(max(anchor.width(), 320), parent.width())
        self.setGeometry(top_left.x(), max(0, top_left.y() - height), width, height)
        self.show()
        self.raise_()

    def values(self) -> list[str]:
        return [self.item(i).data(Qt.ItemDataRole.UserRole) for i in range(self.count())]

    def step(self, delta: int) -> None:
        if self.count():
            self.setCurrentRow((self.currentRow() + delta) % self.count())

    def accept(self) -> bool:
        item = self.currentItem()
        if not self.isVisible() or item is None:
            return False
        self.hide()
        self.picked.emit(item.data(Qt.ItemDataRole.UserRole))
        return True


def _opaque_style(palette: QPalette) -> str:
    """A filled, bordered list a shade off the transcript's background (in either theme),
    so the rows never read as text lying on the conversation."""
    base = palette.color(QPalette.ColorRole.Base)
    lifted = base.lighter(170) if base.lightness() < 128 else base.darker(106)
    border = palette.color(QPalette.ColorRole.Mid)
    if abs(border.lightness() - base.lightness()) < 40:
        border = QColor(palette.color(QPalette.ColorRole.PlaceholderText))
    return (
        f"QListWidget#promptPicker {{ background: {lifted.name()};"
        f" border: {HAIRLINE}px solid {border.name()}; }}"
    )
