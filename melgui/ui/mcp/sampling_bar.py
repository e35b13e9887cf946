"""An MCP server's request for a model's answer (sampling), asked of the person under the
"waiting" line: who asks, during which call, the model it would go to, the answer's token
limit, and exactly the messages that would be sent; Send or Refuse. Requests wait in
order; the oldest is shown.
"""

from __future__ import annotations

import html

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import (
    QFrame,
    QHBoxLayout,
    QLabel,
    QPlainTextEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.protocol.tools.mcp.asks import SamplingRequest
from melgui.ui.runtime.look.tokens import SPACE_S
from melgui.ui.runtime.theme import Colors

SHOWN_LINES = 8


def sent_text(request: SamplingRequest) -> str:
    return "\n\n".join(f"[{m['role']}]\n{m['content']}" for m in request.messages)


class SamplingBar(QFrame):
    showRequested = Signal(str, str)  # (source, call id)
    asked = Signal(object)  # a new SamplingRequest waits for the person (the window signals it)
    answered = Signal()  # one stopped waiting

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("A model's answer asked by an MCP server")
        self.requests: list[SamplingRequest] = []
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.sent = QPlainTextEdit(self)  # what would be sent, word for word
        self.sent.setReadOnly(True)
        self.sent.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.sent.setFixedHeight(self.sent.fontMetrics().lineSpacing() * SHOWN_LINES)
        self.show_button = QPushButton("Show call", self)
        self.show_button.clicked.connect(self._show)
        self.send_button = QPushButton("Send to the model", self)
        self.refuse_button = QPushButton("Refuse", self)
        self.send_button.clicked.connect(lambda: self._answer(SamplingRequest.approve))
        self.refuse_button.clicked.connect(lambda: self._answer(SamplingRequest.refuse))
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.show_button)
        buttons = QHBoxLayout()
        buttons.addStretch(1)
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.refuse_button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_S, SPACE_S, SPACE_S, SPACE_S)
        layout.addLayout(top)
        layout.addWidget(self.sent)
        layout.addLayout(buttons)
        self.hide()

    def add(self, request: SamplingRequest) -> None:
        self.requests.append(request)
        request.answer.add_done_callback(lambda _done: self._drop(request))
        self.refresh()
        self.asked.emit(request)

    def current(self) -> SamplingRequest | None:
        return self.requests[0] if self.requests else None

    def _drop(self, request: SamplingRequest) -> None:
        if request in self.requests:
            self.requests.remove(request)
            self.refresh()
            self.answered.emit()

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.refresh()

    def refresh(self) -> None:
        request = self.current()
        self.setVisible(request is not None)
        if request is None:
            return
        c = self.colors
        during = f" during <b>{html.escape(request.call.tool)}</b>" if request.call else ""
        more = len(self.requests) - 1
        waiting = f" — {more} more waiting" if more > 0 else ""
        self.title.setText(
            f'<span style="color:{c.pending}">◆ Sampling asked</span> by the MCP server '
            f"<b>{html.escape(request.server)}</b>{during}: send this to "
            f"<b>{html.escape(request.model)}</b> for an answer of at most "
            f"{request.max_tokens:,} tokens?"
            f'<span style="color:{c.muted}">{waiting}</span>'
        )
        self.sent.setPlainText(sent_text(request))
        self.show_button.setVisible(request.call is not None and bool(request.call.call_id))

    def _answer(self, how: object) -> None:
        request = self.current()
        if request is not None and callable(how):
            how(request)

    def _show(self) -> None:
        request = self.current()
        if request is not None and request.call is not None:
            self.showRequested.emit(request.call.source, request.call.call_id)
