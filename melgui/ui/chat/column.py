"""The chat as one centred column: at most CHAT_COLUMN_MAX wide with generous margins,
the transcript's text and the composer lined up one above the other."""

from __future__ import annotations

from PySide6.QtWidgets import QAbstractScrollArea, QBoxLayout, QHBoxLayout, QVBoxLayout, QWidget

from melgui.ui.runtime.look.tokens import CHAT_COLUMN_MAX, SPACE_L, SPACE_XS


def side_margin(width: int) -> int:
    """Each side's margin that centres the column in `width` (at least SPACE_L)."""
    return max(SPACE_L, (width - CHAT_COLUMN_MAX) // 2)


def centre_viewport(area: QAbstractScrollArea) -> None:
    """Keep `area`'s viewport (its text) in the centred column; its scroll bar stays at
    the edge, and the wheel scrolls over the margins too."""
    bar = area.verticalScrollBar()
    scroll = bar.width() if bar.isVisible() else 0
    margin = side_margin(area.width())
    area.setViewportMargins(margin, 0, max(0, margin - scroll), 0)


def centred_column(layout: QBoxLayout, *widgets: QWidget) -> QWidget:
    """`widgets` stacked in a column as wide as the transcript's text, centred in `layout`."""
    column = QWidget()
    inner = QVBoxLayout(column)
    inner.setContentsMargins(0, 0, 0, 0)
    inner.setSpacing(SPACE_XS)
    for widget in widgets:
        inner.addWidget(widget)
    column.setMaximumWidth(CHAT_COLUMN_MAX)
    row = QHBoxLayout()
    row.setContentsMargins(SPACE_L, 0, SPACE_L, 0)
    row.addStretch(0)
    row.addWidget(column, 1)
    row.addStretch(0)
    layout.addLayout(row)
    return column
