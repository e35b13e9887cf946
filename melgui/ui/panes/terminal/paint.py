"""Painting a terminal's rows: from any thread, onto the view or onto an image.

`RowPainter` holds what painting needs (fonts, cell metrics, colours) and nothing of the
widget, so a pane's reader thread can render the live screen into a QImage while the
GUI thread stays free (QPainter on a QImage and text rendering work in any thread; each
thread uses its own copies of the fonts). The GUI thread then draws that image and puts
the cursor and the selection over it.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

from PySide6.QtGui import QColor, QFont, QFontMetrics, QImage, QPainter

from melgui.core.terminal.runs import DEFAULT_STYLE, RGB_FLAG, Frame, Run, Style
from melgui.ui.runtime.look.tokens import (
    TERMINAL_ANSI,
    TERMINAL_BG,
    TERMINAL_FG,
    TERMINAL_SELECTION,
)


def _palette() -> list[QColor]:
    colours = [QColor(value) for value in TERMINAL_ANSI]
    steps = (0, 95, 135, 175, 215, 255)
    for r in steps:
        for g in steps:
            for b in steps:
                colours.append(QColor(r, g, b))
    for level in range(24):
        grey = 8 + level * 10
        colours.append(QColor(grey, grey, grey))
    return colours


PALETTE = _palette()
DEFAULT_FG = QColor(TERMINAL_FG)
DEFAULT_BG = QColor(TERMINAL_BG)
SELECTION_BG = QColor(TERMINAL_SELECTION)

Span = tuple[int, int] | None  # selected columns [start, end) of a row, or None


def colour(value: int | None, default: QColor) -> QColor:
    if value is None:
        return default
    if value & RGB_FLAG:
        return QColor((value >> 16) & 0xFF, (value >> 8) & 0xFF, value & 0xFF)
    return PALETTE[value] if 0 <= value < len(PALETTE) else default


class RowPainter:
    """Draws rows of runs in one font. Reentrant: use one per thread."""

    def __init__(self, font: QFont) -> None:
        self.font = QFont(font)
        self.bold = QFont(font)
        self.bold.setBold(True)
        metrics = QFontMetrics(self.font)
        self.cell_w = max(1, metrics.horizontalAdvance("M"))
        self.cell_h = max(1, metrics.height())
        self.ascent = metrics.ascent()
        self._colours: dict[Style, tuple[QColor, QColor | None]] = {}
        self._bold_now = False

    def copy(self) -> RowPainter:
        """Another painter with the same font, for another thread."""
        return RowPainter(self.font)

    def render(self, frame: Frame, width: int, height: int, ratio: float) -> QImage:
        """The frame's rows on a `width` x `height` image (device pixel `ratio`)."""
        image = QImage(
            max(1, round(width * ratio)), max(1, round(height * ratio)), QImage.Format.Format_RGB32
        )
        image.setDevicePixelRatio(ratio)
        painter = QPainter(image)
        painter.fillRect(0, 0, width, height, DEFAULT_BG)
        self.paint(painter, frame.lines, range(len(frame.lines)), lambda _row: None)
        painter.end()
        return image

    def paint(
        self,
        painter: QPainter,
        lines: list[list[Run]],
        rows: range,
        selected: Callable[[int], Span],
    ) -> None:
        painter.setFont(self.font)
        self._bold_now = False
        for row in rows:
            self._paint_row(painter, row, lines[row], selected(row))

    def _paint_row(self, painter: QPainter, row: int, runs: list[Run], selected: Span) -> None:
        y = row * self.cell_h
        # Text in the default style is drawn in one go (blanks where other runs are):
        # each drawText shapes its text, and most of a row is usually plain.
        plain: list[str] = []
        for run in runs:
            in_plain = run.style is DEFAULT_STYLE and run.width == len(run.text)
            if in_plain:
                plain.append(run.text)
                if selected is None:
                    continue
            else:
                plain.append(" " * run.width)
            fg, bg = self._run_colours(run.style)
            x = run.column * self.cell_w
            width = run.width * self.cell_w
            if bg is not None:
                painter.fillRect(x, y, width, self.cell_h, bg)
            if selected is not None:
                start = max(run.column, selected[0])
                end = min(run.column + run.width, selected[1])
                if end > start:
                    painter.fillRect(
                        start * self.cell_w,
                        y,
                        (end - start) * self.cell_w,
                        self.cell_h,
                        SELECTION_BG,
                    )
            if in_plain or not run.text.strip():
                continue
            if run.style.bold != self._bold_now:
                self._bold_now = run.style.bold
                painter.setFont(self.bold if run.style.bold else self.font)
            painter.setPen(fg)
            if run.width == len(run.text):
                painter.drawText(x, y + self.ascent, run.text)
            else:  # wide characters: place each on its own cells
                column = x
                for char in run.text:
                    painter.drawText(column, y + self.ascent, char)
                    column += self.cell_w * (2 if is_wide(char) else 1)
            if run.style.underline:
                painter.drawLine(x, y + self.cell_h - 2, x + width - 1, y + self.cell_h - 2)
            if run.style.strikethrough:
                middle = y + self.cell_h // 2
                painter.drawLine(x, middle, x + width - 1, middle)
        text = "".join(plain).rstrip()
        if text:
            if self._bold_now:
                self._bold_now = False
                painter.setFont(self.font)
            painter.setPen(DEFAULT_FG)
            painter.drawText(0, y + self.ascent, text)

    def _run_colours(self, style: Style) -> tuple[QColor, QColor | None]:
        colours = self._colours.get(style)
        if colours is None:
            if len(self._colours) > 4096:  # true-colour output makes many styles
                self._colours.clear()
            colours = self._colours[style] = self._make_colours(style)
        return colours

    def _make_colours(self, style: Style) -> tuple[QColor, QColor | None]:
        fg = colour(style.fg, DEFAULT_FG)
        if style.bold and style.fg is not None and style.fg < 8:
            fg = PALETTE[style.fg + 8]
        bg = colour(style.bg, DEFAULT_BG) if style.bg is not None else None
        if style.inverse:
            fg, bg = (bg or DEFAULT_BG), fg
        if style.faint:
            fg = QColor(fg.red() // 2 + 20, fg.green() // 2 + 20, fg.blue() // 2 + 20)
        return fg, bg


def is_wide(char: str) -> bool:
    return unicodedata.east_asian_width(char) in ("W", "F")
