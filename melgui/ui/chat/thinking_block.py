"""The model's reasoning in the transcript: a "Thinking" box, apart from the answer.

While reasoning streams the box is open and its text grows at the end of the box's
cell (appended, never redrawn, so a long train of thought costs no more per tick than
a short one). When the answer starts (or the message ends) it folds to one line with
its duration; a click on that line opens or folds it again.
"""

from __future__ import annotations

import html
import time

from PySide6.QtGui import QColor, QTextCharFormat, QTextCursor, QTextTable

from melgui.ui.theme import Colors

THINK_SCHEME = "think"


def duration_text(seconds: float) -> str:
    if seconds < 1:
        return "less than a second"
    if seconds < 60:
        return f"{seconds:.0f} s"
    minutes, rest = divmod(int(seconds), 60)
    return f"{minutes} min {rest} s"


class ThinkingBlock:
    """One box in the document: header link plus (when open) the reasoning text."""

    def __init__(
        self, number: int, table: QTextTable, colors: Colors, *, streaming: bool = True
    ) -> None:
        self.number = number
        self.table = table
        self.colors = colors
        self.parts: list[str] = []
        self.pending: list[str] = []
        self.started = time.monotonic()
        self.duration: float | None = None
        self.streaming = streaming
        self.open = streaming
        self._format = QTextCharFormat()
        self._format.setForeground(QColor(colors.muted))
        self.render()

    @property
    def text(self) -> str:
        return "".join(self.parts) + "".join(self.pending)

    def header_html(self) -> str:
        arrow = "▾" if self.open else "▸"
        if self.streaming:
            label = "Thinking…"
        elif self.duration is not None:
            label = f"Thought for {duration_text(self.duration)}"
        else:
            label = "Thinking"
        return (
            f'<a href="{THINK_SCHEME}:{self.number}" style="color:{self.colors.muted};'
            f' text-decoration:none"><b>{arrow} {html.escape(label)}</b></a>'
        )

    def flush(self) -> bool:
        """Append what streamed since the last flush; True when something was drawn."""
        if not self.pending:
            return False
        text = "".join(self.pending)
        self.pending.clear()
        self.parts.append(text)
        if self.open:
            cursor = self.table.cellAt(0, 0).lastCursorPosition()
            cursor.insertText(text, self._format)
        return True

    def fold(self) -> None:
        """The answer started or the message ended: stop streaming and fold."""
        if not self.streaming:
            return
        self.parts.append("".join(self.pending))
        self.pending.clear()
        self.streaming = False
        self.duration = time.monotonic() - self.started
        self.open = False
        self.render()

    def toggle(self) -> None:
        if self.streaming:
            return
        self.open = not self.open
        self.render()

    def render(self) -> None:
        cell = self.table.cellAt(0, 0)
        cursor = cell.firstCursorPosition()
        cursor.setPosition(cell.lastCursorPosition().position(), QTextCursor.MoveMode.KeepAnchor)
        cursor.removeSelectedText()
        cursor.insertHtml(self.header_html())
        if self.open:
            cursor.insertBlock()
            cursor.insertText("".join(self.parts), self._format)
