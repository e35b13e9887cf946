"""The raw wire log of each leg: the request and every event, keys already redacted."""

from __future__ import annotations

import time

from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QComboBox, QPlainTextEdit, QVBoxLayout, QWidget

from melgui.core.protocol.events import WireEntry
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.wire_recorder import Leg

_ARROW = {"request": "→", "response": "←", "event": "←", "note": "·"}
MAX_SHOWN_CHARS = 20_000  # one entry; a huge request body is cut in the view only


def format_entry(entry: WireEntry) -> str:
    stamp = time.strftime("%H:%M:%S", time.localtime(entry.at)) if entry.at else ""
    text = entry.text
    if len(text) > MAX_SHOWN_CHARS:
        text = text[:MAX_SHOWN_CHARS] + f" … ({len(entry.text) - MAX_SHOWN_CHARS:,} more)"
    return f"{_ARROW[entry.direction]} {entry.direction} {stamp}\n{text}"


class WireLogView(QWidget):
    def __init__(self, bridge: SessionBridge, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.recorder = bridge.recorder
        self.legs = QComboBox(self)
        self.legs.setToolTip("Each leg is one request to the server (one quota unit)")
        self.view = QPlainTextEdit(self)
        self.view.setReadOnly(True)
        self.view.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.view.setPlaceholderText("No leg sent yet.")
        self.view.setMaximumBlockCount(20_000)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.legs)
        layout.addWidget(self.view, 1)
        self.legs.currentIndexChanged.connect(self._show_leg)
        for leg in list(self.recorder.legs):
            self.legs.addItem(self._label(leg), leg.number)
        self.legs.setCurrentIndex(self.legs.count() - 1)
        bridge.wire.connect(self._on_entry)

    def _label(self, leg: Leg) -> str:
        return f"Leg {leg.number}"

    def _leg(self, number: int) -> Leg | None:
        return next((leg for leg in self.recorder.legs if leg.number == number), None)

    def _show_leg(self, index: int) -> None:
        self.view.clear()
        number = self.legs.itemData(index)
        leg = self._leg(number) if isinstance(number, int) else None
        if leg is not None:
            self.view.setPlainText("\n\n".join(format_entry(e) for e in leg.entries))

    def _on_entry(self, entry: WireEntry) -> None:
        latest = self.recorder.legs[-1] if self.recorder.legs else None
        if latest is None:
            return
        following = self.legs.currentIndex() == self.legs.count() - 1
        if self.legs.findData(latest.number) < 0:
            self.legs.addItem(self._label(latest), latest.number)
            if following or self.legs.count() == 1:
                self.legs.setCurrentIndex(self.legs.count() - 1)  # shows the new leg
            return
        if following:
            self.view.appendPlainText("\n" + format_entry(entry))
