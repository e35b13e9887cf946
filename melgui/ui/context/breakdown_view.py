"""The breakdown of the next request drawn as bars: one bar split by kind, then one row
per slice, largest first, each with a bar as long as its share. A row that is a message
is a link to it (`sliceActivated`).

Rows are painted, not widgets: only those in view are drawn, so a 200-message
conversation costs one short paint.
"""

from __future__ import annotations

from PySide6.QtCore import QEvent, QPoint, QRect, QSize, Qt, Signal
from PySide6.QtGui import QColor, QFontMetrics, QMouseEvent, QPainter, QPaintEvent
from PySide6.QtWidgets import QWidget

from melgui.core.context.breakdown import KIND_LABEL, Breakdown, Kind, Slice
from melgui.ui.runtime.theme import LIGHT, Colors

PAD = 6
BAR_H = 14
LEGEND_LINES = 2
LABEL_SHARE = 0.58  # of the width, for a row's label; its bar and count take the rest


def kind_colors(colors: Colors) -> dict[Kind, QColor]:
    """One colour per kind, from the theme's own."""
    return {
        "system": QColor(colors.muted),
        "tool": QColor(colors.pending),
        "message": QColor(colors.accent),
        "result": QColor(colors.ok),
        "file": QColor(colors.warn),
        "image": QColor(colors.error),
    }


def tokens_text(tokens: int) -> str:
    return f"{tokens / 1000:.1f}k" if tokens >= 10_000 else f"{tokens:,}"


class BreakdownView(QWidget):
    """Shows one Breakdown; `show_breakdown` replaces it (the view is reused)."""

    sliceActivated = Signal(object)  # the Slice clicked (one with a message)

    def __init__(self, colors: Colors = LIGHT, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self.breakdown = Breakdown((), 0)
        self._hover: int | None = None
        self.setMouseTracking(True)
        self._row_h = QFontMetrics(self.font()).height() + 6

    # -- the model -------------------------------------------------------------------

    def show_breakdown(self, breakdown: Breakdown) -> None:
        self.breakdown = breakdown
        self._hover = None
        self.setMinimumHeight(self._rows_top() + self._row_h * len(breakdown.slices) + PAD)
        self.updateGeometry()
        self.update()

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.update()

    def sizeHint(self) -> QSize:
        return QSize(520, self.minimumHeight() or 200)

    # -- geometry --------------------------------------------------------------------

    def _rows_top(self) -> int:
        return PAD + BAR_H + PAD + LEGEND_LINES * self._row_h + PAD  # the kinds' bar, legend

    def row_at(self, point: QPoint) -> int | None:
        row = (point.y() - self._rows_top()) // self._row_h
        if point.y() < self._rows_top() or row >= len(self.breakdown.slices):
            return None
        return row

    def row_rect(self, row: int) -> QRect:
        return QRect(0, self._rows_top() + row * self._row_h, self.width(), self._row_h)

    # -- painting --------------------------------------------------------------------

    def paintEvent(self, event: QPaintEvent) -> None:
        painter = QPainter(self)
        painter.setRenderHint(QPainter.RenderHint.Antialiasing, False)
        shown = event.rect()
        if shown.top() < self._rows_top():
            self._paint_kinds(painter)
        slices = self.breakdown.slices
        if not slices:
            return
        first = max(0, (shown.top() - self._rows_top()) // self._row_h)
        last = min(len(slices) - 1, (shown.bottom() - self._rows_top()) // self._row_h)
        largest = max(slices[0].tokens, 1)
        palette = kind_colors(self.colors)
        for row in range(first, last + 1):
            self._paint_row(painter, row, slices[row], largest, palette)

    def _paint_kinds(self, painter: QPainter) -> None:
        total = max(self.breakdown.total, 1)
        palette = kind_colors(self.colors)
        kinds = sorted(self.breakdown.by_kind().items(), key=lambda kv: kv[1], reverse=True)
        width = self.width() - 2 * PAD
        x = PAD
        painter.fillRect(QRect(PAD, PAD, width, BAR_H), QColor(self.colors.border))
        for kind, tokens in kinds:
            span = round(width * tokens / total)
            if span:
                painter.fillRect(QRect(x, PAD, span, BAR_H), palette[kind])
            x += span
        metrics = painter.fontMetrics()
        x, y = PAD, PAD + BAR_H + PAD
        painter.setPen(QColor(self.colors.text))
        for kind, tokens in kinds:
            if not tokens:
                continue
            text = f"{KIND_LABEL[kind]} {100 * tokens // total}%"
            span = 14 + metrics.horizontalAdvance(text) + 12
            if x > PAD and x + span > self.width():  # the legend goes on on a second line
                x, y = PAD, y + self._row_h
            painter.fillRect(QRect(x, y + 4, 10, 10), palette[kind])
            painter.drawText(x + 14, y + metrics.ascent() + 2, text)
            x += span

    def _paint_row(
        self, painter: QPainter, row: int, piece: Slice, largest: int, palette: dict[Kind, QColor]
    ) -> None:
        rect = self.row_rect(row)
        if row == self._hover and piece.message is not None:
            painter.fillRect(rect, QColor(self.colors.user_bubble))
        metrics = painter.fontMetrics()
        label_w = int(rect.width() * LABEL_SHARE)
        count = tokens_text(piece.tokens)
        count_w = metrics.horizontalAdvance("000.0k") + PAD
        bar_x = PAD + label_w + PAD
        bar_w = max(rect.width() - bar_x - count_w - PAD, 10)
        baseline = rect.top() + (rect.height() + metrics.ascent() - metrics.descent()) // 2
        linked = piece.message is not None
        painter.setPen(QColor(self.colors.accent if linked else self.colors.text))
        label = metrics.elidedText(piece.label, Qt.TextElideMode.ElideRight, label_w)
        painter.drawText(PAD, baseline, label)
        track = QRect(bar_x, rect.top() + 4, bar_w, rect.height() - 8)
        painter.fillRect(track, QColor(self.colors.code_bg))
        filled = QRect(
            track.left(), track.top(), max(1, bar_w * piece.tokens // largest), track.height()
        )
        painter.fillRect(filled, palette[piece.kind])
        painter.setPen(QColor(self.colors.muted))
        painter.drawText(
            QRect(bar_x + bar_w, rect.top(), count_w + PAD, rect.height()),
            int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter),
            count,
        )

    # -- the mouse -------------------------------------------------------------------

    def mouseMoveEvent(self, event: QMouseEvent) -> None:
        row = self.row_at(event.position().toPoint())
        if row != self._hover:
            old, self._hover = self._hover, row
            for changed in (old, row):
                if changed is not None:
                    self.update(self.row_rect(changed))
        slices = self.breakdown.slices
        linked = row is not None and slices[row].message is not None
        self.setCursor(Qt.CursorShape.PointingHandCursor if linked else Qt.CursorShape.ArrowCursor)
        if row is not None:
            piece = slices[row]
            where = "click to show it in the chat" if linked else "sent with every request"
            self.setToolTip(f"{piece.label}\n~{piece.tokens:,} tokens — {where}")

    def leaveEvent(self, event: QEvent) -> None:
        if self._hover is not None:
            self.update(self.row_rect(self._hover))
            self._hover = None

    def mouseReleaseEvent(self, event: QMouseEvent) -> None:
        row = self.row_at(event.position().toPoint())
        if row is not None and event.button() == Qt.MouseButton.LeftButton:
            piece = self.breakdown.slices[row]
            if piece.message is not None:
                self.sliceActivated.emit(piece)
