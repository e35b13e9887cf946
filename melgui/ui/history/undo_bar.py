"""A thin bar that offers to undo the last deletion for a few seconds."""

from __future__ import annotations

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QWidget

from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_S

UNDO_SECONDS = 10


class UndoBar(QWidget):
    undoRequested = Signal(str)  # the id of the deleted conversation

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        self.button = QPushButton("Undo", self)
        self.button.clicked.connect(self._undo)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE_S, SPACE_2XS, SPACE_S, SPACE_2XS)
        layout.addWidget(self.label, 1)
        layout.addWidget(self.button)
        self._timer = QTimer(self)
        self._timer.setSingleShot(True)
        self._timer.timeout.connect(self.dismiss)
        self._cid: str | None = None
        self.hide()

    @property
    def pending(self) -> str | None:
        """The deletion that can still be undone, if any."""
        return self._cid

    def offer(self, cid: str, title: str, seconds: float = UNDO_SECONDS) -> None:
        self._cid = cid
        self.label.setText(f"Deleted “{title}”.")
        self.show()
        self._timer.start(int(seconds * 1000))

    def dismiss(self) -> None:
        self._cid = None
        self._timer.stop()
        self.hide()

    def _undo(self) -> None:
        cid = self._cid
        self.dismiss()
        if cid is not None:
            self.undoRequested.emit(cid)
