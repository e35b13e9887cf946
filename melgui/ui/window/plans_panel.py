"""Plans the model wrote with write_plan, rendered as Markdown, newest selected."""

from __future__ import annotations

import html

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QComboBox, QTextBrowser, QVBoxLayout, QWidget

from melgui.ui.chat.blocks.segment_html import SegmentRenderer
from melgui.ui.runtime.theme import Colors


class PlansPanel(QWidget):
    """`sink(title, markdown)` is a PlanSink for the workspace tools; safe from any thread."""

    _arrived = Signal(str, str)

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._renderer = SegmentRenderer(colors)
        self.plans: list[tuple[str, str]] = []
        self.picker = QComboBox(self)
        self.view = QTextBrowser(self)
        self.view.setOpenExternalLinks(False)
        self.view.setPlaceholderText("Plans the agent writes with write_plan appear here.")
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.picker)
        layout.addWidget(self.view, 1)
        self.picker.currentIndexChanged.connect(self._show)
        self._arrived.connect(self.add_plan)
        self.picker.hide()

    def sink(self, title: str, markdown: str) -> None:
        self._arrived.emit(title, markdown)

    def add_plan(self, title: str, markdown: str) -> None:
        self.plans.append((title, markdown))
        self.picker.addItem(title)
        self.picker.setVisible(len(self.plans) > 1)
        self.picker.setCurrentIndex(len(self.plans) - 1)
        self._show(len(self.plans) - 1)

    def clear(self) -> None:
        """Forget the shown plans (another conversation is opened)."""
        self.plans.clear()
        self.picker.clear()
        self.picker.hide()
        self.view.clear()

    def set_colors(self, colors: Colors) -> None:
        self._renderer = SegmentRenderer(colors)
        self._show(self.picker.currentIndex())

    def _show(self, index: int) -> None:
        if not 0 <= index < len(self.plans):
            self.view.clear()
            return
        title, markdown = self.plans[index]
        self.view.setHtml(f"<h2>{html.escape(title)}</h2>{self._renderer.document(markdown)}")
