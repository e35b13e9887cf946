"""An ACP agent's pane: a third-party agent (or `melgui acp`) in the same chat, tool cards
and approvals on their cards as melgui's own workers.

It is an AgentPane whose session is an HostedAgentSession (the same observer surface), plus what
only an ACP agent has: its sign-in methods, its modes and models as pickers, its commands
under `/`, and when it fails, the last lines it wrote to stderr. Its permission requests
reach the window's one approval queue, named by the pane, with the agent's own options.
"""

from __future__ import annotations

import asyncio
import html
import time
from collections.abc import Callable, Coroutine
from typing import TYPE_CHECKING, Any, Protocol, cast

import shiboken6
from PySide6.QtCore import QTimer, Signal
from PySide6.QtGui import QFont
from PySide6.QtWidgets import (
    QComboBox,
    QHBoxLayout,
    QLabel,
    QPushButton,
    QTabWidget,
    QWidget,
)

from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.protocol.views.agent_state import AgentFailed, AgentState, AuthRequired
from melgui.core.protocol.views.prompt_source import PromptFor
from melgui.core.protocol.views.relayed_copies import ShownTerminal
from melgui.core.protocol.views.slash_commands import SlashCommand
from melgui.core.terminal.screen import TerminalScreen
from melgui.core.thread.chat_session import ChatSession
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.ui.panes.agent_pane import AgentPane, ApprovalSink
from melgui.ui.panes.terminal.view import TerminalView
from melgui.ui.runtime.agent_in_host import RemoteAgentSession
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.flush_scheduler import FLUSH_MS, shared_scheduler
from melgui.ui.runtime.look.tokens import SPACE_2XS, SPACE_S
from melgui.ui.runtime.theme import LIGHT, Colors

if TYPE_CHECKING:
    from melgui.desk.hosted_agents.host import AcpHost


class AgentControls(Protocol):
    """What the pane reads and asks of the agent: the AcpHost of one in this window, the
    host's word on one the melgui host runs (RemoteAgentSession.agent)."""

    command: AgentCommand
    cwd: str
    state: AgentState
    failure: str

    async def set_mode(self, mode_id: str) -> None: ...

    async def set_model(self, value: str) -> None: ...


AcpSession = HostedAgentSession | RemoteAgentSession


class AcpPane(AgentPane):
    """Hosts one ACP agent. `start()` (called by the manager) spawns it, here or, for a
    window that is a view of the melgui host, there (its terminals' tabs then drawn from
    the host's records of them)."""

    _stateArrived = Signal()  # the agent's modes/models/commands changed

    def __init__(
        self,
        session: AcpSession,
        task: str = "",
        *,
        bridge: SessionBridge | None = None,
        on_approval: ApprovalSink | None = None,
        colors: Colors = LIGHT,
        tasks: TaskKeeper | None = None,
        parent: QWidget | None = None,
        prompt_for: PromptFor | None = None,
    ) -> None:
        self.acp = session
        self.agent: AgentControls
        if isinstance(session, HostedAgentSession):
            here: AcpHost | None = session.host
            self.agent = session.host
        else:  # in the melgui host: its word on the agent
            here, self.agent = None, session.agent
        if prompt_for is None:  # the manager's, set with its acp_factory (acp_dialogs)
            raise ValueError("an ACP pane needs its prompt box's source (prompt_for)")
        self.kit = prompt_for(self.agent.cwd)  # its own commands under /, its folder's @
        chat_session = cast(ChatSession, session)
        if bridge is None:
            bridge = SessionBridge(chat_session, tasks=tasks)
        super().__init__(
            chat_session,
            "",
            bridge=bridge,
            on_approval=on_approval,
            colors=colors,
            tasks=tasks,
            prompt=self.kit,
            parent=parent,
        )
        bridge.setParent(self)
        if isinstance(session, RemoteAgentSession):
            # a snapshot of the host's (a reattach, whole or again): drawn from it
            session.on_snapshot = session.on_whole = lambda: QTimer.singleShot(
                0, self, self._took_snapshot
            )
            QTimer.singleShot(0, self, self._took_snapshot)  # one reattached: its calls now
        self._first = task
        command = self.agent.command
        self.info.setText(f"ACP agent <b>{html.escape(command.name)}</b> · starting…")
        where = "" if here is not None else "\n(run by the melgui host, as its child process)"
        self.info.setToolTip(command.text() + where)
        self.mode_box = QComboBox(self)
        self.mode_box.setAccessibleName("Agent mode")
        self.mode_box.activated.connect(self._mode_picked)
        self.model_box = QComboBox(self)
        self.model_box.setAccessibleName("Agent model")
        self.model_box.activated.connect(self._model_picked)
        self.sign_in: list[QPushButton] = []
        self._sign_row = QHBoxLayout()
        header = QHBoxLayout()
        header.setContentsMargins(0, 0, SPACE_S, 0)
        header.addWidget(self.info, 1)
        header.addLayout(self._sign_row)
        header.addWidget(self.mode_box)
        header.addWidget(self.model_box)
        layout = self.layout()
        assert layout is not None
        layout.removeWidget(self.info)
        layout.insertLayout(0, header)  # type: ignore[attr-defined]
        self.failure = QLabel(self)
        self.failure.setObjectName("agentFailure")
        self.failure.setWordWrap(True)
        self.failure.setFont(QFont("monospace"))
        self.failure.setContentsMargins(SPACE_S, SPACE_2XS, SPACE_S, SPACE_2XS)
        self.failure.hide()
        layout.insertWidget(1, self.failure)  # type: ignore[attr-defined]
        # The agent's terminal/* commands, shown as they run (tabs under the chat).
        self.terminal_tabs = QTabWidget(self)
        self.terminal_tabs.setDocumentMode(True)
        self.terminal_tabs.hide()
        self._split.addWidget(self.terminal_tabs)
        self.terminal_views: dict[str, TerminalView] = {}
        if here is not None:
            here.terminals.on_open = self.show_terminal
            here.settle = self._drawn
        elif isinstance(session, RemoteAgentSession):  # the host's records of them (and
            copies = session.agent.terminals  # its snapshot's, taken before this pane)
            copies.on_open = self.show_terminal
            for copy in list(copies.copies.values()):
                self.show_terminal(copy)
        self._stateArrived.connect(self._show_state)
        self.agent.state.listen(self._stateArrived.emit)
        self.bridge.loopEvent.connect(lambda _event: self._show_failure())
        self._show_state()

    def _took_snapshot(self) -> None:
        """Drawn again from the host's snapshot, its cards in their calls' phases (a
        question waiting: on its card)."""
        self.chat.redraw_history()
        self.chat.follow_calls(self.acp.thread.calls())

    # -- start ---------------------------------------------------------------------------

    def start(self) -> asyncio.Task[None] | None:
        """Spawn the agent and open its session (in the background)."""
        try:
            return self._tasks.spawn(self._start(), what=f"starting {self.acp.source}")
        except RuntimeError:  # no event loop (a test without one)
            return None

    async def _start(self) -> None:
        acp = self.acp
        try:
            await (acp.start() if isinstance(acp, HostedAgentSession) else acp.started())
        except AuthRequired as exc:
            if shiboken6.isValid(self):
                self._offer_sign_in(exc)
            return
        except AgentFailed as exc:
            if shiboken6.isValid(self):
                self._fail(str(exc))
            return
        if not shiboken6.isValid(self):  # the pane was closed while the agent started
            return
        self._show_state()
        if self._first:
            first, self._first = self._first, ""
            self.send(first)

    def _offer_sign_in(self, exc: AuthRequired) -> None:
        self.info.setText(
            f"ACP agent <b>{html.escape(self.agent.command.name)}</b> asks you to sign in:"
        )
        for method in exc.methods:
            button = QPushButton(method.name, self)
            button.setToolTip(method.description or method.id)
            button.clicked.connect(lambda _=False, m=method.id: self.authenticate(m))
            self._sign_row.addWidget(button)
            self.sign_in.append(button)

    def authenticate(self, method_id: str) -> None:
        self._tasks.spawn(self._authenticate(method_id), what="signing in to the agent")

    async def _authenticate(self, method_id: str) -> None:
        try:
            await self.acp.sign_in(method_id)
        except (AuthRequired, AgentFailed) as exc:
            if shiboken6.isValid(self):
                self._fail(str(exc))
            return
        if not shiboken6.isValid(self):
            return
        for button in self.sign_in:
            button.deleteLater()
        self.sign_in = []
        self._show_state()
        if self._first:
            first, self._first = self._first, ""
            self.send(first)

    async def _drawn(self, limit: float = 30.0) -> None:
        """Wait (at most `limit` s) until the chat has drawn what the agent streamed: an
        agent sends faster than a chat draws, and the turn's end draws the rest at once."""
        scheduler = shared_scheduler()
        deadline = time.monotonic() + limit
        while scheduler.is_pending(self.chat.transcript) and time.monotonic() < deadline:
            await asyncio.sleep(FLUSH_MS / 1000)

    def _fail(self, text: str) -> None:
        self.last_error = text
        self._show_failure()
        self._refresh_state()

    def _show_failure(self) -> None:
        text = self.agent.failure or ""
        self.failure.setVisible(bool(text))
        if text:
            self.failure.setText(text)
            self.failure.setStyleSheet(f"color: {self.chat.colors.error}")

    # -- what the agent offers -------------------------------------------------------------

    def _show_state(self) -> None:
        state = self.agent.state
        if state.session_id:
            who = state.agent_info or state.name
            extra = f" · {len(state.commands)} commands under /" if state.commands else ""
            if state.used is not None and state.size:
                extra += f" · context {state.used:,} / {state.size:,} tokens"
            self.info.setText(f"ACP agent <b>{html.escape(who)}</b>{extra}")
        _fill(self.mode_box, [(m.id, m.name) for m in state.modes], state.mode)
        _fill(self.model_box, [(m.id, m.name) for m in state.models], state.model)
        self.kit.commands.remove_origin("acp")
        for command in state.commands:
            name = command.name.lstrip("/")
            try:
                self.kit.commands.add(SlashCommand(name, command.description, _passes(name), "acp"))
            except ValueError:
                continue  # a name melgui cannot offer under /

    def _mode_picked(self, index: int) -> None:
        mode = str(self.mode_box.itemData(index))
        if mode and mode != self.agent.state.mode:
            self._tasks.spawn(self._set(self.agent.set_mode(mode)), what="changing mode")

    def _model_picked(self, index: int) -> None:
        model = str(self.model_box.itemData(index))
        if model and model != self.agent.state.model:
            self._tasks.spawn(self._set(self.agent.set_model(model)), what="changing model")

    async def _set(self, work: Coroutine[Any, Any, None]) -> None:
        try:
            await work
        except Exception as exc:
            self.chat.show_note(f"The agent refused: {exc}")
            self._show_state()

    def show_terminal(self, terminal: ShownTerminal) -> None:
        """A terminal the agent opened: its screen in a tab, fed as output arrives (one
        the melgui host runs: from its records; its tab says how it ended)."""
        emulator = TerminalScreen(terminal.columns, terminal.rows)
        view = TerminalView(emulator, terminal.write, self.terminal_tabs)

        def feed(data: bytes) -> None:
            emulator.feed(data)
            if shiboken6.isValid(view):
                view.mark_stale()

        feed(bytes(terminal.output))
        terminal.listeners.append(feed)
        self.terminal_views[terminal.id] = view
        self.terminal_tabs.addTab(view, terminal.title[:40])
        self.terminal_tabs.setCurrentWidget(view)
        # How it ended, in its tab (the window's own agent's terminal, or the host's).
        terminal.on_exit.append(lambda: self._terminal_ended(terminal))
        self._terminal_ended(terminal)
        if self.terminal_tabs.isHidden():  # the chat keeps most of the height
            self.terminal_tabs.show()
            sizes = self._split.sizes()
            total = sum(sizes) or self._split.height()
            rest = [0] * (len(sizes) - 2)
            self._split.setSizes([total * 7 // 10, *rest, total * 3 // 10])

    def _terminal_ended(self, terminal: ShownTerminal) -> None:
        view = self.terminal_views.get(terminal.id)
        ending = terminal.ending()
        if not ending or view is None or not shiboken6.isValid(view):
            return
        index = self.terminal_tabs.indexOf(view)
        self.terminal_tabs.setTabText(index, f"{terminal.title[:40]} · {ending}")

    def close_worker(self) -> asyncio.Task[None] | None:
        """End the agent; its open permission requests are answered `cancelled` (one the
        melgui host runs: by the host, unless it keeps running in the background)."""
        here = self.acp.host if isinstance(self.acp, HostedAgentSession) else None
        if here is not None:
            here.gate.cancel_all("The agent's pane was closed.")
        closing = super().close_worker()
        if closing is None and here is not None:  # no event loop (the app is ending)
            here.kill_now()
        return closing


def _passes(name: str) -> Callable[[str], str]:
    """An agent's command: sent to it as the prompt text `/name arguments`."""
    return lambda arguments: f"/{name} {arguments}".strip()


def _fill(box: QComboBox, items: list[tuple[str, str]], current: str) -> None:
    box.blockSignals(True)
    box.clear()
    for value, name in items:
        box.addItem(name, value)
    index = box.findData(current)
    if index >= 0:
        box.setCurrentIndex(index)
    box.setVisible(bool(items))
    box.blockSignals(False)
