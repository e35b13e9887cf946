"""The line over the prompt box that says who answers: the model, where it runs, and,
for a small local model, that its answers are basic, with a link to a better one."""

from __future__ import annotations

from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QLabel, QWidget

from melgui.core.protocol.transport import Answerer

BETTER_MODELS = "better-models"


def model_line_html(answerer: Answerer) -> str:
    text = f"Answers come from <b>{escape(answerer.name)}</b>, {escape(answerer.where)}"
    if answerer.small:
        text += (
            ": a small model that reads files and answers simple questions. "
            f'<a href="act:{BETTER_MODELS}/">Get a better model…</a>'
        )
    return text + "."


class ModelLine(QLabel):
    """`linkRequested(verb)` when its link is clicked (the window opens Settings)."""

    linkRequested = Signal(str)

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.setWordWrap(True)
        self.setTextFormat(Qt.TextFormat.RichText)
        self.setForegroundRole(QPalette.ColorRole.PlaceholderText)
        self.linkActivated.connect(self._link)
        self.answerer: Answerer | None = None
        self.hide()

    def show_answerer(self, answerer: Answerer) -> None:
        self.answerer = answerer
        self.setText(model_line_html(answerer))
        self.setToolTip(f"{answerer.name}, {answerer.where}")
        self.show()

    def _link(self, url: str) -> None:
        self.linkRequested.emit(url.removeprefix("act:").split("/", 1)[0])
