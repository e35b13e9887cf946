"""An MCP server's request for input as a form under the "waiting" line: who asks, during
which call, the server's message, one row per field of the requested schema, and Accept,
Decline, Cancel. Requests wait in order; the oldest is shown.

A request to visit an address (URL mode) shows the address in full with its host in bold
(and a caution when it looks like another's or is not encrypted); it opens in the
browser only when the person presses Open in browser.

Strings are line edits, numbers line edits that say their bounds, booleans check boxes,
a choice a combo box, a multi-select a row of check boxes. Required fields carry a `*`;
an answer that does not fit the schema is refused in words and the form stays.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from typing import Any

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import (
    QCheckBox,
    QComboBox,
    QFormLayout,
    QFrame,
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.protocol.tools.mcp.asks import Field, InputRequest, url_warning
from melgui.ui.runtime.look.tokens import SPACE_S
from melgui.ui.runtime.theme import Colors

Reader = Callable[[], Any]


def _bounds(field: Field) -> str:
    low, high = field.minimum, field.maximum
    if low is not None and high is not None:
        return f"{low:g} to {high:g}"
    if low is not None:
        return f"at least {low:g}"
    return f"at most {high:g}" if high is not None else ""


class InputForm(QFrame):
    showRequested = Signal(str, str)  # (source, call id): open the call in its inspector
    asked = Signal(object)  # a new InputRequest waits for the person (the window signals it)
    answered = Signal()  # one stopped waiting

    def __init__(self, colors: Colors, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self.setFrameShape(QFrame.Shape.StyledPanel)
        self.setAccessibleName("Input asked by an MCP server")
        self.requests: list[InputRequest] = []
        self.readers: dict[str, Reader] = {}
        self.editors: dict[str, QWidget] = {}
        self.title = QLabel(self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        self.message = QLabel(self)
        self.message.setWordWrap(True)
        self.message.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.show_button = QPushButton("Show call", self)
        self.show_button.setAccessibleName("Show the call in its inspector")
        self.show_button.clicked.connect(self._show)
        self.address = QLabel(self)  # URL mode: where the server sends the person
        self.address.setTextFormat(Qt.TextFormat.RichText)
        self.address.setWordWrap(True)
        self.address.setTextInteractionFlags(Qt.TextInteractionFlag.TextSelectableByMouse)
        self.address.hide()
        self.rows = QFormLayout()
        self.problem = QLabel(self)
        self.problem.setObjectName("inputProblem")
        self.problem.hide()
        self.accept_button = QPushButton("Accept", self)
        self.accept_button.setDefault(True)
        self.decline_button = QPushButton("Decline", self)
        self.cancel_button = QPushButton("Cancel", self)
        self.accept_button.clicked.connect(self.accept)
        self.decline_button.clicked.connect(lambda: self._answer(InputRequest.decline))
        self.cancel_button.clicked.connect(lambda: self._answer(InputRequest.cancel))
        top = QHBoxLayout()
        top.addWidget(self.title, 1)
        top.addWidget(self.show_button)
        buttons = QHBoxLayout()
        buttons.addWidget(self.problem)
        buttons.addStretch(1)
        for button in (self.accept_button, self.decline_button, self.cancel_button):
            buttons.addWidget(button)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_S, SPACE_S, SPACE_S, SPACE_S)
        layout.addLayout(top)
        layout.addWidget(self.message)
        layout.addWidget(self.address)
        layout.addLayout(self.rows)
        layout.addLayout(buttons)
        self.hide()

    # -- the queue -----------------------------------------------------------------------

    def add(self, request: InputRequest) -> None:
        """A server's request (its answer may also come from elsewhere: a stopped call)."""
        self.requests.append(request)
        request.answer.add_done_callback(lambda _done: self._drop(request))
        if len(self.requests) == 1:
            self.refresh()
        else:
            self._say_waiting()
        self.asked.emit(request)

    def current(self) -> InputRequest | None:
        return self.requests[0] if self.requests else None

    def _drop(self, request: InputRequest) -> None:
        if request in self.requests:
            first = self.requests[0] is request
            self.requests.remove(request)
            if first:
                self.refresh()
            else:
                self._say_waiting()
            self.answered.emit()

    # -- showing -------------------------------------------------------------------------

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self._say_waiting()

    def refresh(self) -> None:
        request = self.current()
        while self.rows.rowCount():
            self.rows.removeRow(0)
        self.readers.clear()
        self.editors.clear()
        self.problem.hide()
        self.setVisible(request is not None)
        if request is None:
            return
        for field in request.fields:
            self._add_row(field)
        self.message.setText(request.message)
        self.address.setVisible(bool(request.url))
        self.address.setText(self._address_html(request))
        self.accept_button.setText("Open in browser" if request.url else "Accept")
        self.accept_button.setAccessibleName(
            f"Open {request.url} in the browser" if request.url else "Accept"
        )
        self.show_button.setVisible(request.call is not None and bool(request.call.call_id))
        self._say_waiting()
        first = next(iter(self.editors.values()), self.accept_button)
        first.setFocus()

    def _say_waiting(self) -> None:
        request = self.current()
        if request is None:
            return
        c = self.colors
        during = f" during <b>{html.escape(request.call.tool)}</b>" if request.call else ""
        more = len(self.requests) - 1
        waiting = f" — {more} more waiting" if more > 0 else ""
        asked = "A page to open, from" if request.url else "Input asked by"
        self.title.setText(
            f'<span style="color:{c.pending}">◆ {asked}</span> the MCP server '
            f"<b>{html.escape(request.server)}</b>{during}"
            f'<span style="color:{c.muted}">{waiting}</span>'
        )

    def _address_html(self, request: InputRequest) -> str:
        if not request.url:
            return ""
        c = self.colors
        host = request.host
        before, _, after = request.url.partition(host)
        shown = f"{html.escape(before)}<b>{html.escape(host)}</b>{html.escape(after)}"
        warning = url_warning(request.url)
        caution = f'<br/><span style="color:{c.error}">Careful: {html.escape(warning)}.</span>'
        return (
            f'<span style="font-family:monospace">{shown}</span>'
            f'<br/><span style="color:{c.muted}">It opens in your browser only if you '
            f"choose Open in browser; the server learns only whether you did.</span>"
            + (caution if warning else "")
        )

    def _add_row(self, field: Field) -> None:
        editor: QWidget
        reader: Reader
        if field.kind == "boolean":
            box = QCheckBox(self)
            box.setChecked(bool(field.default))
            editor, reader = box, box.isChecked
        elif field.kind == "choice":
            combo = QComboBox(self)
            if not field.required and field.default is None:
                combo.addItem("", None)
            for value, label in field.options:
                combo.addItem(label, value)
            if field.default is not None:
                combo.setCurrentIndex(max(0, combo.findData(str(field.default))))
            editor, reader = combo, combo.currentData
        elif field.kind == "choices":
            editor, reader = self._choices(field)
        else:
            line = QLineEdit(self)
            if field.default is not None:
                line.setText(
                    f"{field.default:g}" if isinstance(field.default, float) else str(field.default)
                )
            line.setPlaceholderText(_bounds(field) or field.description)
            line.textEdited.connect(self.problem.hide)
            editor, reader = line, line.text
        editor.setToolTip(field.description)
        editor.setAccessibleName(field.title)
        title = QLabel(html.escape(field.title) + (" *" if field.required else ""), self)
        title.setToolTip(field.description)
        if field.description and field.kind != "string":
            row = QWidget(self)
            line_layout = QHBoxLayout(row)
            line_layout.setContentsMargins(0, 0, 0, 0)
            line_layout.addWidget(editor)
            note = QLabel(html.escape(field.description), row)
            note.setStyleSheet(f"color:{self.colors.muted}")
            line_layout.addWidget(note, 1)
            self.rows.addRow(title, row)
        else:
            self.rows.addRow(title, editor)
        self.readers[field.name] = reader
        self.editors[field.name] = editor

    def _choices(self, field: Field) -> tuple[QWidget, Reader]:
        row = QWidget(self)
        line = QHBoxLayout(row)
        line.setContentsMargins(0, 0, 0, 0)
        chosen = set(field.default) if isinstance(field.default, list) else set()
        boxes = []
        for value, label in field.options:
            box = QCheckBox(label, row)
            box.setChecked(value in chosen)
            line.addWidget(box)
            boxes.append((value, box))
        line.addStretch(1)
        return row, lambda: [value for value, box in boxes if box.isChecked()]

    # -- answering -----------------------------------------------------------------------

    def values(self) -> dict[str, Any]:
        return {name: read() for name, read in self.readers.items()}

    def accept(self) -> None:
        request = self.current()
        if request is None:
            return
        problem = request.accept(self.values())
        if problem:
            self.problem.setText(problem)
            self.problem.setStyleSheet(f"color:{self.colors.error}")
            self.problem.show()

    def _answer(self, how: Callable[[InputRequest], None]) -> None:
        request = self.current()
        if request is not None:
            how(request)

    def _show(self) -> None:
        request = self.current()
        if request is not None and request.call is not None:
            self.showRequested.emit(request.call.source, request.call.call_id)
