"""The prompt box: Enter sends, Shift+Enter starts a new line; it grows with its text."""

from __future__ import annotations

from PySide6.QtCore import QSize, Qt, Signal
from PySide6.QtGui import QKeyEvent
from PySide6.QtWidgets import QPlainTextEdit, QWidget

MAX_LINES = 8


class PromptInput(QPlainTextEdit):
    submitted = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setTabChangesFocus(True)
        self.setPlaceholderText("Message the agent — Enter sends, Shift+Enter new line")
        self.textChanged.connect(self.updateGeometry)

    def keyPressEvent(self, event: QKeyEvent) -> None:
        enter = event.key() in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        plain = not event.modifiers() & (
            Qt.KeyboardModifier.ShiftModifier
            | Qt.KeyboardModifier.ControlModifier
            | Qt.KeyboardModifier.AltModifier
        )
        if enter and plain:
            self.send()
            return
        if enter and event.modifiers() & Qt.KeyboardModifier.ShiftModifier:
            self.insertPlainText("\n")
            return
        super().keyPressEvent(event)

    def send(self) -> None:
        text = self.toPlainText()
        if not text.strip():
            return
        self.clear()
        self.submitted.emit(text)

    def sizeHint(self) -> QSize:
        lines = min(max(self.document().blockCount(), 2), MAX_LINES)
        height = self.fontMetrics().lineSpacing() * lines + 14
        return QSize(super().sizeHint().width(), height)

    def minimumSizeHint(self) -> QSize:
        return QSize(100, self.fontMetrics().lineSpacing() * 2 + 14)
