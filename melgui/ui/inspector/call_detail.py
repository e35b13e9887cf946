"""One call in full: tool, status, duration, arguments (diff / command / JSON), result.

A call waiting for the person says so here; it is answered on its card in the chat (the
one place a person answers), not here: "Go to its card" brings that card forward.

The arguments' HTML (pretty JSON, a coloured diff) of a big call is made on the render
thread and put in when ready; a small one's costs microseconds and is made at once.
"""

from __future__ import annotations

import html
from collections.abc import Callable
from functools import partial

from PySide6.QtCore import Qt, Signal
from PySide6.QtGui import QFontDatabase
from PySide6.QtWidgets import QLabel, QPlainTextEdit, QSplitter, QTextBrowser, QVBoxLayout, QWidget

from melgui.core.protocol.call_life import decision_label
from melgui.core.protocol.calls import exit_code_of, format_duration
from melgui.ui.approvals.command_parts import command_judgement, parts_html
from melgui.ui.chat.blocks.hook_runs import hook_runs_html, note_lines_html
from melgui.ui.chat.blocks.tool_cards import badge
from melgui.ui.inspector.argument_view import arguments_html
from melgui.ui.inspector.call_book import CallRecord
from melgui.ui.inspector.result_parts_view import ResultPartsView
from melgui.ui.runtime.look.tokens import SPACE_XS
from melgui.ui.runtime.render_thread import RenderJobs
from melgui.ui.runtime.theme import Colors

# Arguments plus diff longer than this (characters) are formatted off the GUI thread.
OFF_THREAD_CHARS = 20_000


class CallDetail(QWidget):
    actionRequested = Signal(str, str)  # (verb, argument) of an act: link in `extra`
    cardRequested = Signal(str)  # a waiting call's "Go to its card": bring its card forward

    def __init__(self, colors: Colors, cwd: str, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self.colors = colors
        self.cwd = cwd
        self.record: CallRecord | None = None
        self.title = QLabel("Select a call", self)
        self.title.setTextFormat(Qt.TextFormat.RichText)
        self.title.setWordWrap(True)
        # What the window adds about a call (its checkpoint: changed files, undo), and
        # what a running call reports as it goes (an MCP tool's progress).
        self.extra_html: Callable[[CallRecord], str] | None = None
        self.live_html: Callable[[CallRecord], str] | None = None
        self.extra = QLabel(self)
        self.extra.setTextFormat(Qt.TextFormat.RichText)
        self.extra.setWordWrap(True)
        self.extra.linkActivated.connect(self._on_link)
        self.extra.hide()
        self.waiting = QLabel(self)  # a waiting call's state: answered on its card
        self.waiting.setObjectName("callWaiting")
        self.waiting.setTextFormat(Qt.TextFormat.RichText)
        self.waiting.setWordWrap(True)
        self.waiting.linkActivated.connect(self._to_card)
        self.waiting.hide()
        # Made in the splitter (a widget moved there would be restyled whole).
        parts = self.parts = QSplitter(Qt.Orientation.Vertical, self)
        self.arguments = QTextBrowser(parts)
        self.arguments.setOpenLinks(False)
        self.result = QPlainTextEdit(parts)
        self.result.setReadOnly(True)
        # Command output keeps its columns (pytest's rules, tables): monospace, unwrapped.
        self.result.setFont(QFontDatabase.systemFont(QFontDatabase.SystemFont.FixedFont))
        self.result.setLineWrapMode(QPlainTextEdit.LineWrapMode.NoWrap)
        self.result.setPlaceholderText("The result appears here when the call has run.")
        # Images, resources, structured content of a result (MCP tools); hidden otherwise.
        self.rich = ResultPartsView(parts)
        self.rich.hide()
        # Where a tool comes from and what it says of itself (an MCP server's annotations),
        # for the title; set by whoever knows (the window, from its desk).
        self.tool_notes: Callable[[str], str] | None = None
        parts.setStretchFactor(0, 3)
        parts.setStretchFactor(1, 1)
        parts.setStretchFactor(2, 2)
        parts.setSizes([600, 200, 300])
        self._jobs = RenderJobs(self._formatted, self)
        self._wanted = 0  # the ticket of the arguments' HTML to show (0: none pending)
        self._shown_key: tuple[object, ...] | None = None  # what the arguments show now
        self._position = 0
        layout = QVBoxLayout(self)
        layout.setContentsMargins(SPACE_XS, SPACE_XS, SPACE_XS, SPACE_XS)
        layout.addWidget(self.title)
        layout.addWidget(self.extra)
        layout.addWidget(self.waiting)
        layout.addWidget(parts, 1)
        self.show_record(None)

    def set_colors(self, colors: Colors) -> None:
        """Redraw the shown call (title, diff, arguments) in `colors`."""
        self.colors = colors
        self.show_record(self.record)

    def show_record(self, record: CallRecord | None) -> None:
        same = record is self.record
        self.record = record
        extra = self.extra_html(record) if record is not None and self.extra_html else ""
        if record is not None and self.live_html is not None:
            extra = self.live_html(record) + extra
        if record is not None and (record.hooks or record.notes):
            shown = hook_runs_html(record.hooks, self.colors)
            extra = shown + note_lines_html(record.notes, self.colors) + extra
        self.extra.setText(extra)
        self.extra.setVisible(bool(extra))
        if record is None:
            self.title.setText("Select a call to see its arguments and result.")
            self.waiting.hide()
            self._wanted = 0
            self._shown_key = None
            self.arguments.clear()
            self.result.clear()
            self.rich.hide()
            return
        self.title.setText(self._title(record))
        self.waiting.setText(
            f'<span style="color:{self.colors.pending}">◆ Waiting for your answer</span> '
            f'<span style="color:{self.colors.muted}">— Allow or Deny it on its card in the '
            f'chat</span> · <a href="card:" style="color:{self.colors.accent}; '
            'text-decoration:none">Go to its card</a>'
        )
        self.waiting.setVisible(record.awaiting_person)
        self._show_arguments(record, same)
        if self.result.toPlainText() != record.result:
            self.result.setPlainText(record.result)
        rich = any(part.kind != "text" for part in record.parts)
        if rich and (not same or self.rich.isHidden()):
            self.rich.show_parts(record.parts, self.colors)
            if self.rich.isHidden():
                self.parts.setSizes([200, 100, 500])  # room for the image
        self.rich.setVisible(rich)

    def _show_arguments(self, record: CallRecord, same: bool) -> None:
        call = record.call
        matched = self._command_parts(record)
        key = (call.name, call.arguments, record.preview, matched, self.colors, self.cwd)
        if key == self._shown_key:
            return  # a status change: the arguments' pane is right as it is
        self._shown_key = key
        self._position = self.arguments.verticalScrollBar().value() if same else 0
        render = partial(
            arguments_html,
            call.name,
            call.arguments,
            record.arguments,
            self.colors,
            cwd=self.cwd,
            preview=record.preview,
            command_parts=matched,
        )
        if len(call.arguments) + len(record.preview or "") <= OFF_THREAD_CHARS:
            self._wanted = 0
            self._put_arguments(render())
            return
        if not same:
            self.arguments.setHtml(f'<p style="color:{self.colors.muted}">Formatting…</p>')
        self._wanted = self._jobs.submit(render)

    def _formatted(self, ticket: int, result: object) -> None:
        if ticket != self._wanted:
            return  # another call (or a newer state of this one) was shown since
        self._wanted = 0
        if isinstance(result, BaseException):
            result = f"<p>Cannot show the arguments: {html.escape(repr(result))}</p>"
        self._put_arguments(str(result))

    def _put_arguments(self, body: str) -> None:
        self.arguments.setHtml(body)
        self.arguments.verticalScrollBar().setValue(self._position)

    def _on_link(self, link: str) -> None:
        scheme, _, rest = link.partition(":")
        if scheme == "act":
            verb, _, argument = rest.partition("/")
            self.actionRequested.emit(verb, argument)

    def _to_card(self, _link: str) -> None:
        if self.record is not None:
            self.cardRequested.emit(self.record.call.id)

    def _command_parts(self, record: CallRecord) -> str:
        if not record.awaiting_person:
            return ""
        judgement = command_judgement(record.request)
        if judgement is None:
            return ""
        return parts_html(judgement, self.colors, sandbox=judgement.sandboxed)

    def _title(self, record: CallRecord) -> str:
        c = self.colors
        mark, words, color = badge(record.status, exit_code_of(record.result), c)
        parts = [
            f"<b>{html.escape(record.call.name)}</b>",
            f'<span style="color:{color}">{mark} {words}</span>',
        ]
        if record.duration is not None:
            parts.append(format_duration(record.duration))
        decided = decision_label(record.decision)
        if decided:
            parts.append(html.escape(decided))
        notes = self.tool_notes(record.call.name) if self.tool_notes is not None else ""
        if notes:
            parts.append(f'<span style="color:{c.muted}">{html.escape(notes)}</span>')
        if record.source != "main":
            parts.append(f"from {html.escape(record.source)}")
        parts.append(f'<span style="color:{c.muted}">id {html.escape(record.call.id)}</span>')
        return " · ".join(parts)
