"""Chips above the prompt box: what goes with the next message (images, files, folders).

Each chip shows a thumbnail (images) or the path (files, folders) and a × that takes
it off. Hidden while there is nothing attached.
"""

from __future__ import annotations

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QFrame, QHBoxLayout, QLabel, QToolButton, QWidget

from melgui.core.protocol.content import FilePart, ImagePart, Part
from melgui.ui.chat.composer.images import image_size, thumbnail
from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_S, SPACE_XS

CHIP_THUMB = 40


def chip_label(part: Part) -> str:
    if isinstance(part, ImagePart):
        size = image_size(part)
        return f"{part.name or 'image'} · {size.width()}×{size.height()}"
    suffix = " (cut)" if part.note else ""
    return f"@{part.path}{suffix}"


class AttachmentChip(QFrame):
    removed = Signal(object)  # the chip

    def __init__(self, part: Part, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.part = part
        self.setObjectName("attachmentChip")
        self.setFrameShape(QFrame.Shape.StyledPanel)
        layout = QHBoxLayout(self)
        layout.setContentsMargins(SPACE_XS, SPACE_2XS, SPACE_2XS, SPACE_2XS)
        layout.setSpacing(SPACE_XS)
        if isinstance(part, ImagePart):
            self.thumb = QLabel(self)
            self.thumb.setPixmap(thumbnail(part, CHIP_THUMB))
            layout.addWidget(self.thumb)
        self.label = QLabel(chip_label(part), self)
        if isinstance(part, FilePart):
            self.label.setToolTip(part.note or part.path)
        layout.addWidget(self.label)
        self.remove_button = QToolButton(self)
        self.remove_button.setText("×")
        self.remove_button.setAutoRaise(True)
        self.remove_button.setToolTip("Remove this attachment")
        self.remove_button.clicked.connect(lambda: self.removed.emit(self))
        layout.addWidget(self.remove_button)


class AttachmentBar(QWidget):
    changed = Signal()

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._layout = QHBoxLayout(self)
        self._layout.setContentsMargins(0, 0, 0, 0)
        self._layout.setSpacing(SPACE_S)
        self._layout.addStretch(1)
        self.chips: list[AttachmentChip] = []
        self.hide()

    def add(self, part: Part) -> None:
        """Attach `part`; the same file or image twice is attached once."""
        if any(_same(chip.part, part) for chip in self.chips):
            return
        chip = AttachmentChip(part, self)
        chip.removed.connect(self._remove)
        self._layout.insertWidget(len(self.chips), chip)
        self.chips.append(chip)
        self.show()
        self.changed.emit()

    def parts(self) -> tuple[Part, ...]:
        return tuple(chip.part for chip in self.chips)

    def take(self) -> tuple[Part, ...]:
        """The parts, and an empty bar."""
        parts = self.parts()
        self.clear()
        return parts

    def clear(self) -> None:
        for chip in self.chips:
            chip.hide()
            chip.deleteLater()
        self.chips.clear()
        self.hide()
        self.changed.emit()

    def _remove(self, chip: AttachmentChip) -> None:
        if chip in self.chips:
            self.chips.remove(chip)
            chip.hide()
            chip.deleteLater()
        if not self.chips:
            self.hide()
        self.changed.emit()


def _same(a: Part, b: Part) -> bool:
    if isinstance(a, ImagePart) and isinstance(b, ImagePart):
        return a.sha256 == b.sha256
    if isinstance(a, FilePart) and isinstance(b, FilePart):
        return a.path == b.path
    return False
