"""Rows of the emulator as styled runs: what a terminal view paints.

A row of 120 cells is turned into a handful of runs (consecutive cells of one style).
This runs for every changed row of every painted frame, so it reads each cell's pen
once and takes the characters from the row's text (one call) instead of cell by cell,
and runs and styles are named tuples (built and hashed in C, unlike frozen dataclasses).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

import avt

RGB_FLAG = 1 << 24


class Style(NamedTuple):
    """How a run of cells looks. Colours: None (default), 0-255 (palette), or 0xRRGGBB | 1<<24."""

    fg: int | None = None
    bg: int | None = None
    bold: bool = False
    faint: bool = False
    italic: bool = False
    underline: bool = False
    strikethrough: bool = False
    inverse: bool = False


DEFAULT_STYLE = Style()


class Run(NamedTuple):
    """Consecutive cells of one style on one row, starting at `column`."""

    column: int
    text: str
    style: Style
    width: int  # cells covered (wide characters take two)


class Cursor(NamedTuple):
    row: int
    column: int
    visible: bool


@dataclass(frozen=True, slots=True)
class Frame:
    """Everything a paint needs, taken at once: rows as runs and the cursor."""

    lines: list[list[Run]]
    cursor: Cursor
    scrolled: int  # lines back into the scrollback these rows are
    columns: int
    rows: int
    generation: int  # the screen's generation when taken


def _colour(value: object) -> int | None:
    if value is None:
        return None
    if isinstance(value, avt.Color.RGB):
        return RGB_FLAG | (value[0] << 16) | (value[1] << 8) | value[2]
    if isinstance(value, avt.Color.Indexed):
        return int(value[0])
    return None


def pen_style(pen: avt.Pen) -> Style:
    if pen.is_default():
        return DEFAULT_STYLE
    return Style(
        _colour(pen.foreground),
        _colour(pen.background),
        pen.bold,
        pen.faint,
        pen.italic,
        pen.underline,
        pen.strikethrough,
        pen.inverse,
    )


def line_runs(line: avt.Line) -> list[Run]:
    """The runs of one row. Rows without wide characters (the text has one character per
    cell) take the fast way: pens compared in a list, text sliced from `line.text`."""
    cells = line.cells
    text = line.text
    if len(text) != len(cells):
        return _cell_runs(cells)
    if not cells:
        return []
    pens = [cell.pen for cell in cells]
    runs: list[Run] = []
    start = 0
    pen = pens[0]
    for index in range(1, len(pens)):
        current = pens[index]
        if current != pen:
            runs.append(Run(start, text[start:index], pen_style(pen), index - start))
            start, pen = index, current
    runs.append(Run(start, text[start:], pen_style(pen), len(pens) - start))
    return runs


def _cell_runs(cells: list[avt.Cell]) -> list[Run]:
    """Cell by cell: wide characters cover two cells (the right half has width 0)."""
    runs: list[Run] = []
    column = 0
    start = 0
    chars: list[str] = []
    pen: avt.Pen | None = None
    width = 0
    for cell in cells:
        cell_width = cell.width
        if cell_width == 0:  # right half of a wide character, counted with its left half
            continue
        cell_pen = cell.pen
        if pen is None or cell_pen != pen:
            if pen is not None:
                runs.append(Run(start, "".join(chars), pen_style(pen), width))
            pen, chars, start, width = cell_pen, [], column, 0
        chars.append(cell.char or " ")
        column += cell_width
        width += cell_width
    if pen is not None:
        runs.append(Run(start, "".join(chars), pen_style(pen), width))
    return runs
