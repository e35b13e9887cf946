"""The model's reasoning in the transcript: a "Thinking" block, apart from the answer.

A header line (a link) and, while open, the reasoning below it, both shaded and
indented like a card. While reasoning streams the block is the end of the document
and its text is appended there (top-level blocks, never inside a table, so Qt lays out
only what was added and a long train of thought costs no more per token than a short
one). When the answer starts (or the message ends) the text is taken out and the
header says how long the model thought; a click on it opens or folds it again.
"""

from __future__ import annotations

import time

from PySide6.QtGui import (
    QColor,
    QFont,
    QTextBlockFormat,
    QTextCharFormat,
    QTextCursor,
    QTextDocument,
)

from melgui.ui.runtime.theme import Colors

THINK_SCHEME = "think"


def duration_text(seconds: float) -> str:
    if seconds < 1:
        return "less than a second"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s"


class ThinkingBlock:
    """One Thinking block; `cursor` is at the end of the document where it starts."""

    def __init__(
        self, number: int, cursor: QTextCursor, colors: Colors, *, streaming: bool = True
    ) -> None:
        self.number = number
        self.colors = colors
        self.parts: list[str] = []
        self.pending: list[str] = []
        self.started = time.monotonic()
        self.duration: float | None = None
        self.streaming = streaming
        self.open = False
        self._body_len = 0  # characters the open body takes after the header block
        box = QTextBlockFormat()
        box.setBackground(QColor(colors.card_bg))
        box.setLeftMargin(6)
        box.setRightMargin(6)
        self._box = box
        self._text = QTextCharFormat()
        self._text.setForeground(QColor(colors.muted))
        cursor.setBlockFormat(self._header_format())
        cursor.setBlockCharFormat(QTextCharFormat())
        cursor.insertText(self.header_text(), self._link_format())
        self._header = cursor.block()  # a handle: stays this block whatever moves
        if streaming:
            self.open = True
            self._body_len = 1
            cursor.insertBlock(self._body_format(), self._text)

    @property
    def text(self) -> str:
        return "".join(self.parts) + "".join(self.pending)

    def header_text(self) -> str:
        arrow = "▾" if self.open or self.streaming else "▸"
        if self.streaming:
            return f"{arrow} Thinking…"
        if self.duration is not None:
            return f"{arrow} Thought for {duration_text(self.duration)}"
        return f"{arrow} Thinking"

    def flush(self) -> bool:
        """Append what streamed since the last flush; True when something was drawn."""
        if not self.pending or not self.streaming:
            return False
        text = "".join(self.pending)
        self.pending.clear()
        self.parts.append(text)
        cursor = self._body_end()
        cursor.insertText(text, self._text)
        self._body_len += len(text)
        return True

    def fold(self) -> None:
        """The answer started or the message ended: stop streaming and fold."""
        if not self.streaming:
            return
        self.parts.append("".join(self.pending))
        self.pending.clear()
        self.streaming = False
        self.duration = time.monotonic() - self.started
        self._remove_body()
        # What comes next starts in a plain block, as after any other insert.
        self._header_end().insertBlock(QTextBlockFormat(), QTextCharFormat())
        self._set_header()

    def toggle(self) -> None:
        if self.streaming:
            return
        if self.open:
            self._remove_body()
        else:
            text = "".join(self.parts)
            cursor = self._header_end()
            cursor.insertBlock(self._body_format(), self._text)
            cursor.insertText(text, self._text)
            self.open = True
            self._body_len = 1 + len(text)
        self._set_header()

    # --- document positions -------------------------------------------------------------

    @property
    def position(self) -> int:
        return self._header.position()

    def moved_to(self, document: QTextDocument, offset: int) -> None:
        """Its drawing was copied into `document`, `offset` characters further on."""
        self._header = document.findBlock(offset + self._header.position())

    def _header_end(self) -> QTextCursor:
        block = self._header
        cursor = QTextCursor(block)
        cursor.setPosition(block.position() + block.length() - 1)
        return cursor

    def _body_end(self) -> QTextCursor:
        cursor = self._header_end()
        cursor.setPosition(cursor.position() + self._body_len)
        return cursor

    def _remove_body(self) -> None:
        if self.open:
            cursor = self._header_end()
            cursor.setPosition(cursor.position() + self._body_len, QTextCursor.MoveMode.KeepAnchor)
            cursor.removeSelectedText()
        self.open = False
        self._body_len = 0

    def _set_header(self) -> None:
        block = self._header
        cursor = QTextCursor(block)
        cursor.setPosition(block.position() + block.length() - 1, QTextCursor.MoveMode.KeepAnchor)
        cursor.insertText(self.header_text(), self._link_format())

    def _header_format(self) -> QTextBlockFormat:
        header = QTextBlockFormat(self._box)
        header.setTopMargin(4)
        return header

    def _body_format(self) -> QTextBlockFormat:
        body = QTextBlockFormat(self._box)
        body.setLeftMargin(18)
        return body

    def _link_format(self) -> QTextCharFormat:
        link = QTextCharFormat()
        link.setAnchor(True)
        link.setAnchorHref(f"{THINK_SCHEME}:{self.number}")
        link.setForeground(QColor(self.colors.muted))
        link.setFontWeight(QFont.Weight.Bold)
        return link
