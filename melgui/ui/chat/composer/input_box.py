"""The prompt box: Enter sends, Shift+Enter starts a new line; it grows with its text.

With a project's PromptSource it also offers: `/` at the start opens the list of slash
commands, `@` opens a fuzzy list of the project's files (a choice becomes a chip and
its text goes with the message), Up on the first line and Down on the last walk the
folder's earlier prompts. Pasted or dropped PNG, JPEG and WebP images become chips.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from PySide6.QtCore import QMimeData, QSize, Qt, Signal
from PySide6.QtGui import QFocusEvent, QImage, QKeyEvent, QTextCursor
from PySide6.QtWidgets import QPlainTextEdit, QWidget

from melgui.core.protocol.content import Part
from melgui.core.protocol.views.prompt_source import HistoryCursor, PromptSource
from melgui.ui.chat.composer.attachment_bar import AttachmentBar
from melgui.ui.chat.composer.images import (
    MAX_BYTES,
    SUFFIXES,
    ImageError,
    fit_image,
    image_from_bytes,
)
from melgui.ui.chat.composer.picker import PickerList

MAX_LINES = 8
_MAX_READ = 64 * 1024 * 1024  # a dropped file larger than this is not read at all
PickerMode = Literal["command", "file"]


class PromptInput(QPlainTextEdit):
    submitted = Signal(str, object)  # text, tuple of parts (images, files)
    problem = Signal(str)  # a one-line reason something could not be attached

    def __init__(self, parent: QWidget | None = None, kit: PromptSource | None = None) -> None:
        super().__init__(parent)
        self.kit = kit
        self.setTabChangesFocus(True)
        # One line, whatever the width: the welcome screen and the tooltip say the rest.
        self._hints = "@ for files, / for commands" if kit is not None else "Enter sends"
        self.setToolTip(
            "Enter sends, Shift+Enter starts a new line"
            + (", / commands, @ files, ↑ earlier prompts" if kit is not None else "")
        )
        self.name_model("the agent")
        self.textChanged.connect(self.updateGeometry)
        self.attachments = AttachmentBar(parent)
        self.picker = PickerList(parent if parent is not None else self)
        self.picker.picked.connect(self._picked)
        self._mode: PickerMode | None = None
        self._token = (0, 0)  # where the `/…` or `@…` being typed is
        self._history = HistoryCursor(kit.history) if kit is not None else None
        self._recalling = False
        self.textChanged.connect(self._update_picker)
        self.cursorPositionChanged.connect(self._update_picker)

    def name_model(self, name: str) -> None:
        """The placeholder says whom the message goes to."""
        self.setPlaceholderText(f"Message {name} — {self._hints}")

    # --- keys -------------------------------------------------------------------------

    def keyPressEvent(self, event: QKeyEvent) -> None:
        key = event.key()
        modifiers = event.modifiers()
        enter = key in (Qt.Key.Key_Return, Qt.Key.Key_Enter)
        if self.picker.isVisible() and enter and self._command_typed_whole():
            self.picker.hide()  # `/help` + Enter runs it
        elif self.picker.isVisible() and self._picker_key(key):
            return
        plain = not modifiers & (
            Qt.KeyboardModifier.ShiftModifier
            | Qt.KeyboardModifier.ControlModifier
            | Qt.KeyboardModifier.AltModifier
        )
        if enter and plain:
            self.send()
            return
        if enter and modifiers & Qt.KeyboardModifier.ShiftModifier:
            self.insertPlainText("\n")
            return
        if plain and key == Qt.Key.Key_Up and self._on_first_line() and self._recall(older=True):
            return
        if plain and key == Qt.Key.Key_Down and self._on_last_line() and self._recall(older=False):
            return
        super().keyPressEvent(event)

    def focusOutEvent(self, event: QFocusEvent) -> None:
        self.picker.hide()  # the list belongs to the box being typed in
        super().focusOutEvent(event)

    def focusNextPrevChild(self, next: bool) -> bool:
        """Tab completes from the open list instead of leaving the box."""
        if self.picker.isVisible():
            self.picker.accept()
            return True
        return super().focusNextPrevChild(next)

    def _picker_key(self, key: int) -> bool:
        if key == Qt.Key.Key_Up:
            self.picker.step(-1)
        elif key == Qt.Key.Key_Down:
            self.picker.step(1)
        elif key in (Qt.Key.Key_Return, Qt.Key.Key_Enter, Qt.Key.Key_Tab):
            self.picker.accept()
        elif key == Qt.Key.Key_Escape:
            self.picker.hide()
            self._mode = None
        else:
            return False
        return True

    def _command_typed_whole(self) -> bool:
        item = self.picker.currentItem()
        return (
            self._mode == "command"
            and item is not None
            and self.toPlainText().strip() == "/" + item.data(Qt.ItemDataRole.UserRole)
        )

    def _on_first_line(self) -> bool:
        return self.textCursor().blockNumber() == 0

    def _on_last_line(self) -> bool:
        return self.textCursor().blockNumber() == self.document().blockCount() - 1

    def _recall(self, *, older: bool) -> bool:
        if self._history is None:
            return False
        text = self._history.older(self.toPlainText()) if older else self._history.newer()
        if text is None:
            return False
        self._recalling = True
        try:
            self.setPlainText(text)
            self.moveCursor(QTextCursor.MoveOperation.End)
        finally:
            self._recalling = False
        self.picker.hide()
        return True

    # --- sending ----------------------------------------------------------------------

    def send(self) -> None:
        text = self.toPlainText()
        parts = self.attachments.parts()
        if not text.strip() and not parts:
            return
        if self.kit is not None and text.strip():
            self.kit.history.add(text)
        if self._history is not None:
            self._history.reset()
        self.picker.hide()
        self.clear()
        self.attachments.clear()
        self.submitted.emit(text, parts)

    def attach(self, part: Part) -> None:
        self.attachments.add(part)

    # --- the / and @ list ---------------------------------------------------------------

    def _update_picker(self) -> None:
        if self.kit is None or self._recalling:
            return
        text = self.toPlainText()
        position = self.textCursor().position()
        before = text[:position]
        if before.startswith("/") and not any(c.isspace() for c in before):
            if before == "/":
                self.kit.reload_commands()  # files may have changed since
            self._mode, self._token = "command", (0, position)
            rows = [
                (c.name, f"/{c.name}  —  {c.summary}")
                for c in self.kit.commands.matching(before[1:])
            ]
            self.picker.show_items(rows, self)
            return
        start = position
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        token = text[start:position]
        if token.startswith("@"):
            self._mode, self._token = "file", (start, position)
            found = self.kit.files.search(token[1:], 50)
            for source in self.kit.mentions:
                found += source.search(token[1:], 20)
            rows = [(path, path) for path in found]
            self.picker.show_items(rows, self)
            return
        self._mode = None
        self.picker.hide()

    def _picked(self, value: str) -> None:
        mode, (start, end) = self._mode, self._token
        self._mode = None
        if mode is None or self.kit is None:
            return
        cursor = self.textCursor()
        cursor.setPosition(start)
        cursor.setPosition(end, QTextCursor.MoveMode.KeepAnchor)
        if mode == "command":
            cursor.insertText(f"/{value} ")
            self.picker.hide()
            return
        cursor.removeSelectedText()
        self.picker.hide()
        source = next((s for s in self.kit.mentions if s.owns(value)), None)
        if source is not None:
            source.pick(value, self.attach, self.problem.emit)
            return
        try:
            self.attach(self.kit.attach(value))
        except ValueError as exc:
            self.problem.emit(str(exc))

    # --- images pasted or dropped -----------------------------------------------------------

    def canInsertFromMimeData(self, source: QMimeData) -> bool:
        return (
            bool(_image_files(source)) or source.hasImage() or super().canInsertFromMimeData(source)
        )

    def insertFromMimeData(self, source: QMimeData) -> None:
        files = _image_files(source)
        if files:
            for path in files:
                self._attach_image_file(path)
            return
        if source.hasImage():
            image = QImage(source.imageData())
            try:
                self.attach(fit_image(image, "pasted.png"))
            except ImageError as exc:
                self.problem.emit(str(exc))
            return
        super().insertFromMimeData(source)

    def attach_path(self, path: Path) -> None:
        """Attach a chosen file: an image as an image, a file in the project as `@` does."""
        if path.suffix.lower() in SUFFIXES:
            self._attach_image_file(path)
            return
        if self.kit is None:
            self.problem.emit(f"{path.name}: only images can be attached here")
            return
        try:
            self.attach(self.kit.attach(str(path)))
        except ValueError as exc:
            self.problem.emit(str(exc))

    def start_token(self, char: str) -> None:
        """Type `char` ("@" or "/") as a person would, opening its list; `/` only begins
        a message, so it goes first."""
        cursor = self.textCursor()
        if char == "/":
            cursor.movePosition(QTextCursor.MoveOperation.Start)
        elif cursor.position() and not self.toPlainText()[cursor.position() - 1].isspace():
            char = " " + char
        cursor.insertText(char)
        self.setTextCursor(cursor)
        self.setFocus()

    def _attach_image_file(self, path: Path) -> None:
        try:
            if path.stat().st_size > _MAX_READ:
                raise ImageError(f"{path.name} is too large to attach")
            part = image_from_bytes(path.read_bytes(), path.name)
        except (OSError, ImageError) as exc:
            self.problem.emit(str(exc) if isinstance(exc, ImageError) else f"{path.name}: {exc}")
            return
        assert len(part.data) <= MAX_BYTES
        self.attach(part)

    # --- size -------------------------------------------------------------------------

    def sizeHint(self) -> QSize:
        lines = min(max(self.document().blockCount(), 2), MAX_LINES)
        height = self.fontMetrics().lineSpacing() * lines + 14
        return QSize(super().sizeHint().width(), height)

    def minimumSizeHint(self) -> QSize:
        return QSize(100, self.fontMetrics().lineSpacing() * 2 + 14)


def _image_files(source: QMimeData) -> list[Path]:
    if not source.hasUrls():
        return []
    paths = [Path(url.toLocalFile()) for url in source.urls() if url.isLocalFile()]
    return [path for path in paths if path.suffix.lower() in SUFFIXES]
