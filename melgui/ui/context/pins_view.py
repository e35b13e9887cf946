"""A conversation's pinned facts as a list: pin one, unpin one. A fact pinned here is kept
word for word at every compaction and told to the model with the next message; the
model pins its own with pin_fact, and they show here too."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol

from PySide6.QtCore import Qt
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QListWidget,
    QListWidgetItem,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.protocol.tools.pins import PIN_LIMIT
from melgui.core.thread.changes import Change, StateChanged
from melgui.core.thread.entries import Pin
from melgui.core.thread.thread import Thread
from melgui.ui.runtime.look.tokens import NOTE_MAX_H

BY = {"person": "you", "model": "the model"}


class Pinned(Protocol):
    """A conversation's pins as this view shows and changes them: an AgentSession's, or a
    RemoteSession's (pinned in the melgui host, shown as its thread says)."""

    @property
    def thread(self) -> Thread: ...

    @property
    def pins(self) -> tuple[Pin, ...]: ...

    def pin(self, text: str) -> bool: ...

    def unpin(self, text: str) -> bool: ...


class PinsView(QWidget):
    def __init__(self, session: Pinned | None = None, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.session: Pinned | None = None
        self._unsubscribe: Callable[[], None] | None = None
        self._shown: tuple[Pin, ...] | None = None
        title = QLabel("<b>Pinned facts</b> — kept word for word at every compaction", self)
        self.list = QListWidget(self)
        self.list.setWordWrap(True)
        self.list.setMaximumHeight(NOTE_MAX_H)
        self.list.itemSelectionChanged.connect(self._selected)
        self.entry = QLineEdit(self)
        self.entry.setPlaceholderText("A fact to keep, e.g. the API is v2; never edit generated/")
        self.entry.setMaxLength(PIN_LIMIT)
        self.entry.returnPressed.connect(self.pin_typed)
        self.pin_button = QPushButton("Pin", self)
        self.pin_button.clicked.connect(self.pin_typed)
        self.unpin_button = QPushButton("Unpin", self)
        self.unpin_button.setEnabled(False)
        self.unpin_button.clicked.connect(self.unpin_selected)
        self.note = QLabel("", self)
        self.note.setWordWrap(True)
        row = QHBoxLayout()
        row.addWidget(self.entry, 1)
        row.addWidget(self.pin_button)
        row.addWidget(self.unpin_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(title)
        layout.addWidget(self.list)
        layout.addLayout(row)
        layout.addWidget(self.note)
        if session is not None:
            self.follow(session)

    def follow(self, session: Pinned | None) -> None:
        """Show `session`'s pins from now on (None: a session that keeps no pins)."""
        if self._unsubscribe is not None:
            self._unsubscribe()
            self._unsubscribe = None
        self.session = session
        self._shown = None
        if session is not None:
            self._unsubscribe = session.thread.subscribe(self._on_change)
        for widget in (self.entry, self.pin_button):
            widget.setEnabled(session is not None)
        self.refresh()

    def _on_change(self, change: Change) -> None:
        if isinstance(change, StateChanged) and change.state.pins != self._shown:
            self.refresh()

    def refresh(self) -> None:
        pins = self.session.pins if self.session is not None else ()
        self._shown = pins
        self.list.clear()
        for pin in pins:
            item = QListWidgetItem(f"{pin.text}  — pinned by {BY[pin.by]}", self.list)
            item.setData(Qt.ItemDataRole.UserRole, pin.text)
        if not pins:
            empty = "No pinned facts. Pin what the model must never lose; it can pin too."
            if self.session is None:
                empty = "This conversation's agent keeps its own context: nothing to pin here."
            item = QListWidgetItem(empty, self.list)
            item.setFlags(Qt.ItemFlag.NoItemFlags)
        self._selected()

    def pin_typed(self) -> None:
        text = self.entry.text().strip()
        if self.session is None or not text:
            return
        if self.session.pin(text):
            self.entry.clear()
            self.note.setText("Pinned: the model reads it with your next message.")
        else:
            self.note.setText("Already pinned.")

    def unpin_selected(self) -> None:
        item = self.list.currentItem()
        text = item.data(Qt.ItemDataRole.UserRole) if item is not None else None
        if self.session is not None and isinstance(text, str) and self.session.unpin(text):
            self.note.setText("Unpinned: the next compaction does not keep it.")

    def _selected(self) -> None:
        item = self.list.currentItem()
        has = item is not None and isinstance(item.data(Qt.ItemDataRole.UserRole), str)
        self.unpin_button.setEnabled(has and self.session is not None)
