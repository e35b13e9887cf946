"""A hunk's lines, painted: base and new line numbers, then each line in its colour on a
tinted background. Painting only what is visible keeps a file of hundreds of hunks quick
to show (a rich-text label per hunk took seconds). Right-click copies the lines."""

from __future__ import annotations

from dataclasses import dataclass

from PySide6.QtCore import QPoint, Qt
from PySide6.QtGui import (
    QColor,
    QContextMenuEvent,
    QFontDatabase,
    QFontMetrics,
    QGuiApplication,
    QPainter,
    QPaintEvent,
)
from PySide6.QtWidgets import QMenu, QSizePolicy, QWidget

from melgui.core.worktrees.changes.diff import Hunk
from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_S
from melgui.ui.runtime.theme import Colors

MAX_HUNK_LINES = 1500  # a longer hunk shows its start; Apply still applies all of it
_GUTTER = 13  # characters: "12345 12345  "


@dataclass(frozen=True, slots=True)
class Row:
    numbers: str
    text: str
    kind: str  # "+", "-", " ", "\\" or "…"


def hunk_rows(hunk: Hunk) -> list[Row]:
    """The rows to show: line numbers at the base and now, the line with tabs expanded."""
    old, new = hunk.old_start, hunk.new_start
    rows: list[Row] = []
    for line in hunk.lines[:MAX_HUNK_LINES]:
        tag, text = line[:1] or " ", line.expandtabs(4)
        if tag == "+":
            rows.append(Row(f"{'':>5} {new:>5}", text, "+"))
            new += 1
        elif tag == "-":
            rows.append(Row(f"{old:>5} {'':>5}", text, "-"))
            old += 1
        elif tag == "\\":
            rows.append(Row("", text, "\\"))
        else:
            rows.append(Row(f"{old:>5} {new:>5}", text, " "))
            old, new = old + 1, new + 1
    if len(hunk.lines) > MAX_HUNK_LINES:
        more = len(hunk.lines) - MAX_HUNK_LINES
        rows.append(Row("", f"… {more:,} more lines (Apply applies them all)", "…"))
    return rows


class HunkLines(QWidget):
    def __init__(self, hunk: Hunk, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.hunk = hunk
        self.rows = hunk_rows(hunk)
        self.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        metrics = QFontMetrics(self.font())
        self._line = metrics.height()
        self._ascent = metrics.ascent()
        self._gutter = metrics.horizontalAdvance("0" * _GUTTER)
        widest = max((metrics.horizontalAdvance(row.text) for row in self.rows), default=0)
        self.setMinimumSize(
            self._gutter + widest + SPACE_S, self._line * len(self.rows) + SPACE_2XS
        )
        self.setSizePolicy(QSizePolicy.Policy.Expanding, QSizePolicy.Policy.Fixed)
        added_bg, removed_bg = colors.diff_add, colors.diff_del
        self._pens = {
            "+": QColor(colors.ok),
            "-": QColor(colors.error),
            " ": QColor(colors.text),
            "\\": QColor(colors.muted),
            "…": QColor(colors.muted),
        }
        self._fills = {"+": QColor(added_bg), "-": QColor(removed_bg)}
        self._muted = QColor(colors.muted)
        self.setContextMenuPolicy(Qt.ContextMenuPolicy.DefaultContextMenu)

    def text(self) -> str:
        """The lines as shown (without numbers), one per line."""
        return "\n".join(row.text for row in self.rows)

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        area = event.rect()
        first = max(0, area.top() // self._line)
        last = min(len(self.rows), area.bottom() // self._line + 1)
        for index in range(first, last):
            row = self.rows[index]
            top = index * self._line
            fill = self._fills.get(row.kind)
            if fill is not None:
                painter.fillRect(self._gutter - 4, top, self.width(), self._line, fill)
            baseline = top + self._ascent
            painter.setPen(self._muted)
            painter.drawText(QPoint(4, baseline), row.numbers)
            painter.setPen(self._pens[row.kind])
            painter.drawText(QPoint(self._gutter, baseline), row.text)
        painter.end()

    def contextMenuEvent(self, event: QContextMenuEvent) -> None:
        menu = QMenu(self)
        menu.addAction("Copy these lines", self.copy)
        menu.exec(event.globalPos())

    def copy(self) -> None:
        QGuiApplication.clipboard().setText("\n".join(self.hunk.lines) + "\n")
