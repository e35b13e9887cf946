"""An agent pane: a worker AgentSession of melgui's own, shown as a small chat and inspector.

The worker has its own conversation, seeded with its task; its approvals go through the
same policy as the main chat, and every one that needs a person is also handed to the
window's approval queue (`on_approval`), named after the pane, so nothing waits unseen.
The chat and the inspector are the main window's own widgets: a question is answered on
its call's card in the pane's chat, as in the main chat.
A worker in its own git worktree says so in its header (`worktree`: the Changes view and
the agents board read it).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from html import escape

from PySide6.QtCore import Qt, Signal
from PySide6.QtWidgets import QLabel, QSizePolicy, QSplitter, QVBoxLayout, QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantText,
    LoopEvent,
    MessageAdded,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.views.prompt_source import PromptSource
from melgui.core.terminal.panes import IDLE, RUNNING, WAITING, PaneState, failed
from melgui.core.thread.chat_session import ChatSession
from melgui.core.worktrees.model import Worktree
from melgui.ui.approvals.approval_queue import ApprovalQueue
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.inspector.call_book import CallBook
from melgui.ui.inspector.inspector import Inspector
from melgui.ui.panes.worker_worktrees import WorktreeThere
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_S
from melgui.ui.runtime.theme import LIGHT, Colors

ApprovalSink = Callable[[ApprovalRequest], None]


class AgentPane(QWidget):
    """Shows and drives one worker session. Emits `stateChanged(PaneState)`."""

    stateChanged = Signal(object)

    def __init__(
        self,
        session: ChatSession,
        task: str | None,
        *,
        bridge: SessionBridge | None = None,
        on_approval: ApprovalSink | None = None,
        colors: Colors = LIGHT,
        tasks: TaskKeeper | None = None,
        prompt: PromptSource | None = None,
        worktree: Worktree | None = None,
        parent: QWidget | None = None,
        history_when_shown: bool = False,
        there: WorktreeThere | None = None,
        note: str = "",
        reviewer: Callable[[], AgentSession] | None = None,
    ) -> None:
        """`there`: its worktree is on another machine (`worktree` is its, read there);
        `note`: said in the chat before its task (where it works, when not as asked);
        `reviewer`: makes the read-only session its Changes view's Review asks, one whose
        tools read the worktree there (None: the window's, for a worktree here)."""
        super().__init__(parent)
        self.session = session
        self.worktree = worktree  # its own git worktree; None: it works in the project folder
        self.worktree_there = there
        self.reviewer = reviewer
        self.note = note  # where it works, when not as asked (no git repository there)
        # Whoever outlives the pane keeps its closing task (the manager, in the window).
        self._tasks = tasks if tasks is not None else TaskKeeper()
        self.task = task or ""  # None: opened without a task (a worktree to review)
        self.state: PaneState = IDLE
        self.streaming: list[str] = []  # the reply being written now
        self.last_error = ""
        self._on_approval = on_approval
        self._closed = False
        self.bridge = bridge if bridge is not None else SessionBridge(session, parent=self)
        self.approvals = ApprovalQueue(self)  # its questions waiting: its state says so
        self.chat = ChatView(
            self.bridge, colors, self, prompt=prompt, when_shown=history_when_shown
        )
        if task:  # its task is its first message: no welcome over the empty chat meanwhile
            self.chat.welcome.wanted = False
            self.chat.welcome.hide()
        # The inspector opens when a call is clicked: it is built then (opening a pane
        # stays short), from the calls its book has recorded since the pane opened, and
        # takes no room until then, so a terminal split above keeps its rows.
        self.book = CallBook(self.bridge, self)
        self._inspector: Inspector | None = None
        self._colors = colors
        self.chat.callActivated.connect(self.show_call)
        split = QSplitter(Qt.Orientation.Vertical, self)
        split.addWidget(self.chat)
        split.setStretchFactor(0, 3)
        self._split = split
        self.info = info = QLabel(f"worker · model <b>{session.loop.model}</b>", self)
        info.setObjectName("workerInfo")
        if worktree is not None:
            on = f" on {there.host}" if there is not None else ""
            info.setText(f"{info.text()} · own worktree, branch <b>{escape(worktree.branch)}</b>")
            info.setToolTip(
                f"Works in {session.loop.cwd}{on}\n(a git worktree of {worktree.main}, "
                f"from commit {worktree.base[:10]}); the project folder is not touched."
            )
        elif note:
            info.setText(f"{info.text()} · <b>no worktree</b>: in the folder itself")
            info.setToolTip(note)
        info.setContentsMargins(SPACE_S, SPACE_2XS, SPACE_S, 0)
        # A long model name is cut at the pane's edge, never holds the pane wide.
        info.setSizePolicy(QSizePolicy.Policy.Ignored, QSizePolicy.Policy.Preferred)
        layout = QVBoxLayout(self)
        layout.setContentsMargins(0, 0, 0, 0)
        layout.setSpacing(SPACE_2XS)
        layout.addWidget(info)
        layout.addWidget(split, 1)
        self.setFocusProxy(self.chat.input)
        self.bridge.loopEvent.connect(self._on_event)
        self.bridge.busyChanged.connect(lambda _busy: self._refresh_state())
        self.approvals.changed.connect(self._refresh_state)
        if note:
            self.chat.transcript.add_notice(note, colors.warn)
        if task:  # an ACP agent's pane opens without a first message
            self.send(task)

    @property
    def inspector(self) -> Inspector:
        """The pane's inspector, built on first use (hidden until a call is shown)."""
        if self._inspector is None:
            cwd = self.session.loop.cwd
            inspector = Inspector(self.bridge, self._colors, cwd=cwd, book=self.book, parent=self)
            inspector.hide()
            inspector.detail.cardRequested.connect(self.chat.answers.reveal)
            self._split.insertWidget(1, inspector)  # under the chat, above anything else
            self._split.setStretchFactor(1, 1)
            self._inspector = inspector
        return self._inspector

    def set_colors(self, colors: Colors) -> None:
        """Follow a theme change of the window."""
        self._colors = colors
        self.chat.set_colors(colors)
        if self._inspector is not None:
            self._inspector.set_colors(colors)

    # -- talking to the worker ---------------------------------------------------------

    def send(self, text: str) -> bool:
        """Queue a message for the worker; True when it had to wait behind a running turn."""
        queued = self.session.busy
        self.last_error = ""
        self.bridge.submit(text)
        self._refresh_state()
        return queued

    def latest_reply(self) -> str:
        """The worker's last finished reply (assistant text), or "" when none yet."""
        for message in reversed(self.session.conversation.messages):
            if message.role == "assistant" and message.content.strip():
                return message.content
        return ""

    def pending_approvals(self) -> list[ApprovalRequest]:
        return self.approvals.pending()

    def reveal_call(self, call_id: str) -> None:
        """A waiting call: its card, where it is answered; another: its inspector."""
        if not self.chat.answers.reveal(call_id):
            self.show_call(call_id)

    def show_call(self, call_id: str) -> None:
        if self.inspector.isHidden():
            self.inspector.show()
        sizes = self._split.sizes()
        if len(sizes) == 2 and sizes[1] < 80:
            total = sum(sizes) or self._split.height()
            self._split.setSizes([total * 3 // 5, total * 2 // 5])
        self.inspector.show_call(call_id)

    # -- events ------------------------------------------------------------------------

    def _on_event(self, event: LoopEvent) -> None:
        if self._closed:
            return
        if isinstance(event, AssistantText):
            self.streaming.append(event.text)
        elif isinstance(event, MessageAdded) and event.message.role == "assistant":
            self.streaming.clear()
        elif isinstance(event, ApprovalNeeded):
            request = event.request
            self.approvals.add(request)
            if self._on_approval is not None:
                self._on_approval(request)
        elif isinstance(event, TurnFailed):
            self.last_error = event.message
        elif isinstance(event, TurnFinished):
            self.last_error = ""
        self._refresh_state()

    def _refresh_state(self) -> None:
        if self._closed:
            return
        if self.approvals.pending():
            state = WAITING
        elif self.bridge.busy:
            state = RUNNING
        elif self.last_error:
            state = failed(self.last_error)
        else:
            state = IDLE
        if state != self.state:
            self.state = state
            self.stateChanged.emit(state)

    # -- end ---------------------------------------------------------------------------

    def close_worker(self) -> asyncio.Task[None] | None:
        """Stop the worker (its conversation stays valid); pending approvals are denied."""
        if self._closed:
            return None
        self._closed = True
        for request in self.approvals.pending():
            request.deny("The worker's pane was closed.")
        self.bridge.detach()
        self.bridge.deleteLater()
        with contextlib.suppress(RuntimeError):
            return self._tasks.spawn(self.session.aclose(), what=f"closing {self.session.source}")
        self.session.stop()
        return None
