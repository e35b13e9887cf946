"""ChatView: the transcript of one session, its input box, Send and Stop.

Constructible on its own from a SessionBridge (the worker panes embed one). Reopening a
long conversation draws only its last messages; "Show earlier messages" draws more.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from typing import assert_never

from PySide6.QtCore import Qt, QTimer, Signal
from PySide6.QtGui import QKeySequence, QShortcut
from PySide6.QtWidgets import QHBoxLayout, QLabel, QPushButton, QVBoxLayout, QWidget

from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.calls import shorten, summarize
from melgui.core.protocol.content import ImagePart, Part
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantReasoning,
    AssistantText,
    ContextNotice,
    HistoryBranched,
    HistoryRepaired,
    LegFinished,
    LegStarted,
    LoopEvent,
    MessageAdded,
    Retrying,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.store.records import NoteRecord
from melgui.core.transports.project_instructions import instruction_file_names
from melgui.desk.attachments import without_images
from melgui.desk.prompt_kit import PromptKit
from melgui.desk.slash_commands import looks_like_command
from melgui.ui.bridge import SessionBridge
from melgui.ui.chat.empty_note import EmptyNote
from melgui.ui.chat.input_box import PromptInput
from melgui.ui.chat.tool_cards import card_html
from melgui.ui.chat.transcript import ChatTranscript
from melgui.ui.failure_text import explain_failure, rejects_images
from melgui.ui.theme import LIGHT, Colors

HISTORY_PAGE = 100  # messages drawn when a conversation is opened, and per "show earlier"
MAX_DRAWN = 3 * HISTORY_PAGE  # more drawn at the end of a turn: redraw the last page only
LOAD_TICK_S = 0.012  # drawing an earlier page: at most this long per event-loop tick


class ChatView(QWidget):
    callActivated = Signal(str)  # a tool card was clicked: open this call in the inspector
    actionRequested = Signal(str, str)  # (verb, argument): a card's or message's action link

    def __init__(
        self,
        bridge: SessionBridge,
        colors: Colors = LIGHT,
        parent: QWidget | None = None,
        *,
        prompt: PromptKit | None = None,
    ) -> None:
        """`prompt`: the folder's slash commands, prompt history and `@` file index (the
        main chat has them; a worker pane's chat does without)."""
        super().__init__(parent)
        self.bridge = bridge
        self.colors = colors
        self.prompt = prompt
        self.transcript = ChatTranscript(colors, self)
        self.transcript.callActivated.connect(self.callActivated)
        self.transcript.moreRequested.connect(self._show_more)
        self.transcript.actionRequested.connect(self.actionRequested)
        # What the window adds under a finished card (changed files, undo) and under a
        # user message (rewind): html with act: links; none by default.
        self.card_extra: Callable[[str, CallPhase], str] | None = None
        self.user_links: Callable[[int], str] | None = None
        self.transcript.laterRequested.connect(self._show_later)
        self.empty_note = EmptyNote(self.transcript)
        self.instructions_label = QLabel(self)  # the project instruction files in force
        self.instructions_label.setWordWrap(True)
        self.instructions_label.hide()
        self.queued_label = QLabel(self)
        self.queued_label.setWordWrap(True)
        self.queued_label.hide()
        self.input = PromptInput(self, prompt)
        self.input.submitted.connect(self.submit)
        self.note_label = QLabel(self)  # why an attachment or a command did not work
        self.note_label.setWordWrap(True)
        self.note_label.hide()
        self.input.problem.connect(self.show_note)
        self.input.textChanged.connect(self.note_label.hide)
        self.send_button = QPushButton("Send", self)
        self.send_button.clicked.connect(self.input.send)
        self.stop_button = QPushButton("Stop (Esc)", self)
        self.stop_button.setToolTip("Stop the running leg and tool; the conversation stays valid")
        self.stop_button.setEnabled(False)
        self.stop_button.clicked.connect(self.stop)
        buttons = QVBoxLayout()
        buttons.addWidget(self.send_button)
        buttons.addWidget(self.stop_button)
        buttons.addStretch(1)
        row = QHBoxLayout()
        row.addWidget(self.input, 1)
        row.addLayout(buttons)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.addWidget(self.instructions_label)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.queued_label)
        layout.addWidget(self.note_label)
        layout.addWidget(self.input.attachments)
        layout.addLayout(row)
        escape = QShortcut(QKeySequence(Qt.Key.Key_Escape), self)
        escape.setContext(Qt.ShortcutContext.WidgetWithChildrenShortcut)
        escape.activated.connect(self.stop)
        self._calls: dict[str, tuple[str, str]] = {}  # id -> (tool, summary)
        # id -> (status, duration) as last drawn, so a redraw keeps live states.
        self._card_states: dict[str, tuple[CallPhase, float | None]] = {}
        self._shown_from = 0
        self._shown_to: int | None = None  # end of an earlier page shown; None: to the end
        # A page drawn a few messages per tick, so "show earlier" never stalls the window.
        self._pending: deque[tuple[int, Message]] = deque()  # (index, message)
        self._pending_states: dict[str, tuple[CallPhase, float | None]] = {}
        self._load_timer = QTimer(self)
        self._load_timer.setSingleShot(True)
        self._load_timer.timeout.connect(self._draw_pending)
        # (position, kind, text) of a reopened conversation's errors, retries and stops.
        self.failures: list[tuple[int, str, str]] = []
        bridge.loopEvent.connect(self.on_event)
        bridge.busyChanged.connect(self.stop_button.setEnabled)
        self._images_refused = ""  # why the last turn failed, when on an image
        bridge.busyChanged.connect(self._after_turn)
        bridge.busyChanged.connect(self._on_busy)
        bridge.queuedChanged.connect(self._on_queued)
        self.load_conversation(bridge.session.conversation)
        self.show_instruction_files()

    # --- actions ---------------------------------------------------------------------

    def submit(self, text: str, parts: tuple[Part, ...] = ()) -> None:
        """Send a message, or run the slash command it names."""
        if self.prompt is not None and text.startswith("/"):
            found = self.prompt.commands.parse(text)
            if found is None and self.prompt.reload_commands():  # a file added since
                found = self.prompt.commands.parse(text)
            if found is not None:
                command, arguments = found
                expanded = command.run(arguments)
                if expanded is None:  # the command did its work
                    for part in parts:  # attachments wait for the next message
                        self.input.attach(part)
                    return
                text = expanded
            elif looks_like_command(text):
                self.input.setPlainText(text)
                for part in parts:
                    self.input.attach(part)
                name = text.split()[0]
                self.show_note(f"Unknown command {name}: /help lists the commands.")
                return
        model = self.bridge.session.loop.model
        images = any(isinstance(part, ImagePart) for part in parts)
        if images and self.prompt is not None and self.prompt.refuses_images(model):
            self.input.setPlainText(text)
            for part in parts:
                self.input.attach(part)
            self.show_note(
                f"{model} does not take images (the server's model list says so): remove "
                "the image or choose another model."
            )
            return
        self.bridge.submit(text, parts)

    def _after_turn(self, busy: bool) -> None:
        """A server refused an image: take images out of the history (kept in a branch),
        so the next message is not refused for the same image again."""
        if busy or not self._images_refused:
            return
        why, self._images_refused = self._images_refused, ""
        session = self.bridge.session
        messages = session.conversation.messages
        if any(isinstance(p, ImagePart) for m in messages for p in m.parts):
            note = f"{why} — the images are taken out of the conversation (kept in its history)."
            session.branch(without_images(messages), "edit", note)

    def show_note(self, text: str) -> None:
        self.note_label.setText(text)
        self.note_label.setStyleSheet(f"color: {self.colors.error}")
        self.note_label.show()

    def stop(self) -> None:
        """Stop the turn; messages still queued go back into the input box, not lost."""
        attached = [p for m in self.bridge.session.queued_messages for p in m.parts]
        dropped = self.bridge.stop()
        for part in attached:
            self.input.attach(part)
        if dropped:
            current = self.input.toPlainText()
            self.input.setPlainText("\n\n".join([*dropped, current] if current else dropped))

    def set_colors(self, colors: Colors) -> None:
        self.colors = colors
        self.transcript.set_colors(colors)
        self.load_conversation(self.bridge.session.conversation)

    # --- history -------------------------------------------------------------------------

    def load_conversation(
        self,
        conversation: Conversation,
        start: int | None = None,
        *,
        end: int | None = None,
        progressive: bool = False,
    ) -> None:
        """Draw the conversation from message `start` (default: its last page) to `end`
        (default: the end). `progressive` draws a few messages per event-loop tick."""
        self._load_timer.stop()
        self._pending.clear()
        messages = conversation.messages
        if start is None:
            start = max(0, len(messages) - HISTORY_PAGE)
        # Never start (or end) between a call and its results.
        while 0 < start < len(messages) and messages[start].role == "tool":
            start -= 1
        while end is not None and end < len(messages) and messages[end].role == "tool":
            end += 1
        if end is not None and end >= len(messages):
            end = None
        self._shown_from, self._shown_to = start, end
        self._pending_states = dict(self._card_states)  # live states outlive a redraw
        self.transcript.clear_all()
        self._calls.clear()
        if start:
            self.transcript.add_more_link(start)
        self._pending.extend(enumerate(messages[start:end], start))
        self._draw_pending(LOAD_TICK_S if progressive else None)
        if progressive:
            self.transcript.verticalScrollBar().setValue(0)

    def _draw_pending(self, budget: float | None = None) -> None:
        """Draw queued messages: all of them, or for `budget` seconds then on the next tick."""
        if budget is None and self.sender() is self._load_timer:
            budget = LOAD_TICK_S
        deadline = None if budget is None else time.perf_counter() + budget
        while self._pending:
            index, message = self._pending.popleft()
            self._draw_failures(index)
            self._draw_message(message, index)
            if deadline is not None and self._pending and time.perf_counter() > deadline:
                self._load_timer.start(0)
                return
        messages = self.bridge.session.conversation.messages
        if self._shown_to is not None:
            self.transcript.add_later_link(len(messages) - self._shown_to)
        else:
            self._draw_failures(len(messages))
        for call_id, (status, duration) in self._pending_states.items():
            self._set_card(call_id, status, duration)
        self._pending_states = {}
        self.transcript.finish_assistant(None)

    def _finish_loading(self) -> None:
        if self._pending or self._load_timer.isActive():
            self._load_timer.stop()
            self._draw_pending(None)

    def show_failures(self, failures: list[tuple[int, NoteRecord]]) -> None:
        """A reopened conversation's errors, retries and stops, drawn where they happened."""
        if failures:
            self.failures = [(at, note.kind, note.text) for at, note in failures]
            self.load_conversation(self.bridge.session.conversation)

    def _draw_failures(self, position: int) -> None:
        """Errors, retries and stops of a reopened conversation, where they happened."""
        colors = {"error": self.colors.error, "stopped": self.colors.warn}
        for at, kind, text in self.failures:
            if at != position:
                continue
            if kind == "error":
                explained = explain_failure(text, None)
                self.transcript.add_notice(explained.text, colors[kind], action=explained.action)
            elif kind == "stopped":
                self.transcript.add_notice("Stopped.", colors[kind], action=shorten(text, 120))
            else:
                self.transcript.add_notice(f"Retried: {shorten(text, 160)}", self.colors.muted)

    def _show_more(self) -> None:
        """The page before the first drawn one; at most MAX_DRAWN messages stay drawn."""
        conversation = self.bridge.session.conversation
        start = max(0, self._shown_from - HISTORY_PAGE)
        if self.bridge.busy:  # live events append at the end: draw through to it
            self.load_conversation(conversation, start)
            return
        self.load_conversation(conversation, start, end=start + MAX_DRAWN, progressive=True)

    def _show_later(self) -> None:
        conversation = self.bridge.session.conversation
        end = (self._shown_to or len(conversation.messages)) + HISTORY_PAGE
        start = max(0, end - MAX_DRAWN)
        self.load_conversation(conversation, start, end=end, progressive=True)

    def _on_busy(self, busy: bool) -> None:
        if busy and self._shown_to is not None:  # a turn starts: show where it goes on
            self.load_conversation(self.bridge.session.conversation)

    def refresh_cards(self) -> None:
        """Draw every card again (what a checkpoint says about it may have changed)."""
        for call_id, (status, duration) in list(self._card_states.items()):
            self._set_card(call_id, status, duration)

    def _index_of(self, message: Message) -> int:
        messages = self.bridge.session.conversation.messages
        for index in range(len(messages) - 1, -1, -1):
            if messages[index] is message:
                return index
        return -1

    def _user_links(self, index: int) -> str:
        if index < 0:
            return ""
        return self.user_links(index) if self.user_links is not None else ""

    def _draw_message(self, message: Message, index: int) -> None:
        if message.role == "user":
            self.transcript.add_user(message.content, self._user_links(index), message.parts)
        elif message.role == "assistant":
            self.transcript.add_thinking(message.reasoning)
            self.transcript.add_assistant(message.content)
            for call in message.tool_calls:
                self._add_card(call, "requested")
        elif message.role == "tool" and message.tool_call_id is not None:
            status: CallPhase = message.status or "ok"
            self._set_card(message.tool_call_id, status)
        elif message.role == "system":
            self.transcript.add_notice(shorten(message.content, 200), self.colors.muted)

    # --- live events ------------------------------------------------------------------

    def on_event(self, event: LoopEvent) -> None:
        self._finish_loading()
        t = self.transcript
        match event:
            case AssistantText(text=text):
                t.stream_text(text)
            case AssistantReasoning(text=text):
                t.stream_reasoning(text)
            case MessageAdded(message=message):
                if message.role == "assistant":
                    t.finish_assistant(message.content)
                    for call in message.tool_calls:
                        self._add_card(call, "requested")
                elif message.role == "user":
                    links = self._user_links(self._index_of(message))
                    t.add_user(message.content, links, message.parts)
            case ApprovalNeeded(request=request):
                self._set_card(request.call.id, "waiting")
            case ToolCallStarted(call=call):
                self._set_card(call.id, "running")
            case ToolCallFinished(call=call, status=status, duration=duration):
                if not t.has_card(call.id):
                    self._add_card(call, status)
                self._set_card(call.id, status, duration)
            case TurnFailed(message=text, status=status):
                explained = explain_failure(text, status)
                self._images_refused = explained.text if rejects_images(text, status) else ""
                t.add_notice(explained.text, self.colors.error, action=explained.action)
            case TurnCancelled():
                t.add_notice("Stopped.", self.colors.warn, action="the conversation is kept")
            case Retrying(attempt=attempt, delay=delay, reason=reason):
                t.add_notice(
                    f"Retrying in {delay:.0f} s (attempt {attempt + 1}): {shorten(reason, 120)}",
                    self.colors.muted,
                )
            case HistoryRepaired(repair=repair):
                t.add_notice(repair.describe(), self.colors.muted)
            case HistoryBranched(messages=messages, note=note):
                self.failures = []  # placed on the old list of messages
                self.load_conversation(Conversation(list(messages)))
                if note:
                    self.transcript.add_notice(note, self.colors.muted)
            case ContextNotice(text=text, level=level):
                color = self.colors.warn if level == "warning" else self.colors.muted
                t.add_notice(text, color)
            case TurnFinished():
                self.show_instruction_files()
                self._bound_drawn()
            case LegStarted() | LegFinished() | ToolCallRequested():
                pass
            case _:
                assert_never(event)

    # --- long sessions (issue 19) -------------------------------------------------------

    def show_instruction_files(self) -> None:
        """Name the project instruction files the model reads (AGENTS.md, …)."""
        names = instruction_file_names(self.bridge.session.loop.cwd)
        self.instructions_label.setVisible(bool(names))
        self.instructions_label.setText(
            f'<span style="color:{self.colors.muted}">Project instructions in force: '
            f"{', '.join(names)}</span>"
        )
        self.instructions_label.setToolTip("Sent with every request as part of the system message")

    def _bound_drawn(self) -> None:
        """A long live session keeps only its last page drawn, so memory stays bounded."""
        messages = self.bridge.session.conversation.messages
        bar = self.transcript.verticalScrollBar()
        if len(messages) - self._shown_from > MAX_DRAWN and bar.value() >= bar.maximum():
            self.load_conversation(self.bridge.session.conversation)

    def _add_card(self, call: ToolCall, status: CallPhase) -> None:
        summary = summarize(call.name, call.parsed)
        self._calls[call.id] = (call.name, summary)
        self.transcript.add_card(
            call.id, card_html(call.id, call.name, summary, status, self.colors)
        )

    def _set_card(self, call_id: str, status: CallPhase, duration: float | None = None) -> None:
        known = self._calls.get(call_id)
        if known is None:
            return
        name, summary = known
        self._card_states[call_id] = (status, duration)
        extra = self.card_extra(call_id, status) if self.card_extra is not None else ""
        self.transcript.update_card(
            call_id, card_html(call_id, name, summary, status, self.colors, duration, extra)
        )

    def _on_queued(self, texts: list[str]) -> None:
        if not texts:
            self.queued_label.hide()
            return
        preview = " · ".join(shorten(text, 60) for text in texts[:3])
        more = f" (+{len(texts) - 3})" if len(texts) > 3 else ""
        self.queued_label.setText(f"Queued ({len(texts)}): {preview}{more}")
        self.queued_label.show()
