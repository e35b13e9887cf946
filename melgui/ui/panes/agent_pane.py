"""An agent pane: a worker AgentSession of melgui's own, shown as a small chat with its calls.

The worker has its own conversation, seeded with its task; its approvals go through the
same policy as the main chat, and every one that needs a person is also handed to the
window's approval queue (`on_approval`), named after the pane, so nothing waits unseen.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import assert_never

from PySide6.QtCore import QTimer, Signal
from PySide6.QtWidgets import (
    QHBoxLayout,
    QLabel,
    QLineEdit,
    QPushButton,
    QVBoxLayout,
    QWidget,
)

from melgui.core.approval import ApprovalRequest
from melgui.core.loop_events import (
    ApprovalNeeded,
    AssistantText,
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
from melgui.core.panes import IDLE, RUNNING, WAITING, PaneState, failed
from melgui.core.session import AgentSession
from melgui.ui.call_summary import CallStatus, parse_arguments, summarize
from melgui.ui.chat.tool_cards import card_html
from melgui.ui.chat.transcript import ChatTranscript
from melgui.ui.theme import LIGHT, Colors

ApprovalSink = Callable[[ApprovalRequest], None]


class ApprovalStrip(QWidget):
    """The oldest approval this worker waits for, with Approve / Deny."""

    def __init__(self, parent: QWidget | None = None) -> None:
        super().__init__(parent)
        self._requests: list[ApprovalRequest] = []
        self.label = QLabel(self)
        self.label.setWordWrap(True)
        approve = QPushButton("Approve", self)
        deny = QPushButton("Deny", self)
        approve.clicked.connect(lambda: self._answer(True))
        deny.clicked.connect(lambda: self._answer(False))
        row = QHBoxLayout(self)
        row.setContentsMargins(6, 2, 6, 2)
        row.addWidget(self.label, 1)
        row.addWidget(approve)
        row.addWidget(deny)
        self.hide()

    def add(self, request: ApprovalRequest) -> None:
        self._requests.append(request)
        request.future.add_done_callback(lambda _f: self._refresh())
        self._refresh()

    @property
    def pending(self) -> list[ApprovalRequest]:
        return [request for request in self._requests if request.pending]

    def _answer(self, approve: bool) -> None:
        pending = self.pending
        if not pending:
            return
        if approve:
            pending[0].approve()
        else:
            pending[0].deny("Denied in the worker's pane.")

    def _refresh(self) -> None:
        self._requests = self.pending
        if not self._requests:
            self.hide()
            return
        first = self._requests[0]
        summary = summarize(first.call.name, first.arguments, 60)
        more = f" (+{len(self._requests) - 1} more)" if len(self._requests) > 1 else ""
        self.label.setText(f"◆ <b>{first.call.name}</b> {summary}{more}")
        self.show()


class AgentPane(QWidget):
    """Shows and drives one worker session. Emits `stateChanged(PaneState)`."""

    stateChanged = Signal(object)

    def __init__(
        self,
        session: AgentSession,
        task: str,
        *,
        on_approval: ApprovalSink | None = None,
        colors: Colors = LIGHT,
        parent: QWidget | None = None,
    ) -> None:
        super().__init__(parent)
        self.session = session
        self.task = task
        self.colors = colors
        self.state: PaneState = IDLE
        self.streaming: list[str] = []  # the reply being written now
        self.last_error = ""
        self._on_approval = on_approval
        self._closed = False
        self._watch = QTimer(self)
        self._watch.setInterval(100)
        self._watch.timeout.connect(self._refresh_state)
        info = QLabel(f"worker · model <b>{session.loop.model}</b>", self)
        info.setContentsMargins(6, 2, 6, 0)
        self.transcript = ChatTranscript(colors, self)
        self.approvals = ApprovalStrip(self)
        self.input = QLineEdit(self)
        self.input.setPlaceholderText("Message this worker — Enter sends")
        self.input.returnPressed.connect(self._on_input)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(2)
        layout.addWidget(info)
        layout.addWidget(self.transcript, 1)
        layout.addWidget(self.approvals)
        layout.addWidget(self.input)
        self.setFocusProxy(self.input)
        self._unsubscribe = session.subscribe(self._on_event)
        self.send(task)

    # -- talking to the worker ---------------------------------------------------------

    def send(self, text: str) -> bool:
        """Queue a message for the worker; True when it had to wait behind a running turn."""
        queued = self.session.busy
        self.session.submit(text)
        self.last_error = ""
        self._refresh_state()
        return queued

    def _on_input(self) -> None:
        text = self.input.text().strip()
        if text and not self._closed:
            self.input.clear()
            self.send(text)

    def latest_reply(self) -> str:
        """The worker's last finished reply (assistant text), or "" when none yet."""
        for message in reversed(self.session.conversation.messages):
            if message.role == "assistant" and message.content.strip():
                return message.content
        return ""

    # -- events ------------------------------------------------------------------------

    def _on_event(self, event: LoopEvent) -> None:
        if self._closed:
            return
        match event:
            case MessageAdded(message=message):
                if message.role == "user":
                    self.transcript.add_user(message.content)
                elif message.role == "assistant":
                    self.streaming.clear()
                    self.transcript.finish_assistant(message.content)
            case AssistantText(text=text):
                self.streaming.append(text)
                self.transcript.stream_text(text)
            case ToolCallRequested(call=call):
                self._card(call.id, call.name, call.arguments, "requested")
            case ApprovalNeeded(request=request):
                request.source = self._source()
                self._card(request.call.id, request.call.name, request.call.arguments, "pending")
                self.approvals.add(request)
                request.future.add_done_callback(lambda _f: self._refresh_state())
                if self._on_approval is not None:
                    self._on_approval(request)
            case ToolCallStarted(call=call):
                self._card(call.id, call.name, call.arguments, "running")
            case ToolCallFinished(call=call, status=status, duration=duration):
                self._card(call.id, call.name, call.arguments, status, duration)
            case TurnFailed(message=message):
                self.last_error = message
                self.transcript.add_notice(message, self.colors.error)
            case TurnCancelled():
                self.transcript.add_notice("Stopped.", self.colors.warn)
            case Retrying(delay=delay, reason=reason):
                self.transcript.add_notice(f"{reason} — retrying in {delay:.0f}s", self.colors.warn)
            case LegStarted() | LegFinished() | HistoryRepaired() | TurnFinished():
                pass
            case _:
                assert_never(event)
        self._refresh_state()

    def _source(self) -> str:
        return self.session.source

    def _card(
        self,
        call_id: str,
        name: str,
        arguments: str,
        status: CallStatus,
        duration: float | None = None,
    ) -> None:
        summary = summarize(name, parse_arguments(arguments), 60)
        html = card_html(call_id, name, summary, status, self.colors, duration)
        if self.transcript.has_card(call_id):
            self.transcript.update_card(call_id, html)
        else:
            self.transcript.add_card(call_id, html)

    def _refresh_state(self) -> None:
        if self._closed:
            return
        if self.approvals.pending:
            state = WAITING
        elif self.session.busy:
            state = RUNNING
        elif self.last_error:
            state = failed(self.last_error)
        else:
            state = IDLE
        if state != self.state:
            self.state = state
            self.stateChanged.emit(state)
        # `busy` turns false after the last event of a turn; look again until it has.
        if self.session.busy and not self._watch.isActive():
            self._watch.start()
        elif not self.session.busy:
            self._watch.stop()

    # -- end ---------------------------------------------------------------------------

    def close_worker(self) -> asyncio.Task[None] | None:
        """Stop the worker (its conversation stays valid); pending approvals are denied."""
        if self._closed:
            return None
        self._closed = True
        self._watch.stop()
        for request in self.approvals.pending:
            request.deny("The worker's pane was closed.")
        self._unsubscribe()
        with contextlib.suppress(RuntimeError):
            return asyncio.get_event_loop().create_task(self.session.aclose())
        self.session.stop()
        return None
