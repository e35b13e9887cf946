"""AcpHost: one ACP agent process and one session of it, driven from melgui.

    host = AcpHost(parse_command("opencode acp"), cwd, policy=desk.policy, ask=queue.add)
    host.subscribe(print)                      # melgui LoopEvents
    await host.start()                         # spawn, initialize, session/new
    stop_reason = await host.prompt("hello")   # "end_turn", "cancelled", …
    await host.aclose()

Every request races the agent's exit: an agent that dies answers with AgentFailed (its
stderr tail in the message) instead of a hang, and `failure` keeps the reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any, Literal, TypeVar

from acp import PROTOCOL_VERSION, RequestError, connect_to_agent, text_block
from acp.client.connection import ClientSideConnection
from acp.schema import (
    ClientCapabilities,
    FileSystemCapabilities,
    Implementation,
)

from melgui.core.config.settings import config_dir
from melgui.core.protocol.approval import ApprovalRequest, Deny
from melgui.core.protocol.events import Usage
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    ContextNotice,
    LoopEvent,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.protocol.views.agent_state import AgentFailed, AgentState, AuthRequired, Choice
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import AGENT_COMMAND_TOOL
from melgui.core.runtime.deadline import within
from melgui.core.thread.reducer import ThreadReducer
from melgui.core.thread.thread import Thread
from melgui.desk.hosted_agents.client import HostClient
from melgui.desk.hosted_agents.exit_race import AgentEnded, answer_or_exit
from melgui.desk.hosted_agents.files import AgentFiles, WriteGuard
from melgui.desk.hosted_agents.mcp_entries import McpEntry, mcp_entries
from melgui.desk.hosted_agents.permissions import AskPerson, PermissionGate
from melgui.desk.hosted_agents.process import AgentProcess, AgentStartError
from melgui.desk.hosted_agents.terminals import AgentTerminal, AgentTerminals, SandboxFor
from melgui.desk.hosted_agents.updates import PlanSink, UpdateTranslator
from melgui.tools.mcp.config import ServerConfig
from melgui.tools.workspace import Workspace

log = logging.getLogger(__name__)
T = TypeVar("T")
Observer = Callable[[LoopEvent], None]
HostStatus = Literal["new", "ready", "prompting", "failed", "closed"]
# Starts the agent's program: (command, folder, env) -> its process (AgentStartError).
Spawn = Callable[[AgentCommand, str, Mapping[str, str]], Awaitable[AgentProcess]]
START_TIMEOUT = 60.0  # initialize and session/new; a prompt may take as long as it takes
CANCEL_GRACE = 5.0  # how long a cancelled turn may take to end before the agent is ended
AUTH_REQUIRED = -32000


class AcpHost:
    """One agent, one session. Not thread-safe: use it on one event loop."""

    def __init__(
        self,
        command: AgentCommand,
        cwd: str,
        *,
        env: Mapping[str, str] | None = None,
        policy: RulePolicy | None = None,
        ask: AskPerson | None = None,
        source: str = "",
        mcp_servers: Sequence[ServerConfig] = (),
        around_write: WriteGuard | None = None,
        plans: PlanSink | None = None,
        on_terminal: Callable[[AgentTerminal], None] | None = None,
        sandbox: SandboxFor | None = None,
        start_timeout: float = START_TIMEOUT,
        cancel_grace: float = CANCEL_GRACE,
    ) -> None:
        self.command = command
        # raises ValueError for a folder that is not one; melgui's own configuration (its
        # keys and which folders are trusted) is never the agent's to write
        workspace = Workspace(cwd, config_dir=config_dir())
        self.cwd = str(workspace.root)
        self.env = dict(env or {})
        self.source = source or command.name
        self.mcp_servers = list(mcp_servers)
        self.mcp_http = False  # the agent can use HTTP MCP servers (from initialize)
        self.mcp_left_out: list[str] = []  # servers session/new did not get, and why
        self.state = AgentState(command.name)
        self.conversation = Conversation()
        self.failure = ""
        self.process: AgentProcess | None = None
        self.connection: ClientSideConnection | None = None
        self.usage = Usage()
        self.start_timeout = start_timeout
        self.cancel_grace = cancel_grace
        self._observers: list[Observer] = []
        # The agent's conversation as the one thread model views read (its reducer hears
        # every event first, as an AgentSession's does).
        self.thread = Thread()
        self.reducer = ThreadReducer(self.thread, source=self.source, agent=command.name)
        self._ask = ask
        self.gate = PermissionGate(
            command.origin, self.source, policy, self._ask_person, self._tell
        )
        self.files = AgentFiles(workspace, self.source, around_write)
        self.terminals = AgentTerminals(
            workspace, on_terminal, refusal=self._refusal, sandbox=sandbox
        )
        self._policy = policy
        self.translator = UpdateTranslator(self.conversation, self.emit, self.state, plans)
        self.gate.known_diff = self.translator.diff_of
        self._client = HostClient(self._on_update, self.gate, self.files, self.terminals)
        self._prompting = False
        self._turn_over = asyncio.Event()
        self._turn_over.set()
        self._cancelled = False
        self._closing = False
        self._watch: asyncio.Task[None] | None = None
        self._spawn: Spawn = AgentProcess.start
        # Awaited before a turn's end is told (the pane: until its chat has drawn the
        # burst of text it was sent, so the final message is not drawn all in one go).
        self.settle: Callable[[], Awaitable[None]] | None = None

    def run_there(
        self, folder: str, spawn: Spawn, files: AgentFiles, terminals: AgentTerminals
    ) -> None:
        """Before `start`: the agent runs elsewhere (a remote folder's host), in `folder`
        there, started by `spawn`, its file and terminal requests answered there."""
        self.cwd = folder
        self._spawn = spawn
        self.files = files
        self.terminals = terminals
        self._client = HostClient(self._on_update, self.gate, self.files, self.terminals)

    @property
    def status(self) -> HostStatus:
        """Where the host is: "failed" (see `failure`) takes every later request."""
        if self.failure:
            return "failed"
        if self._closing:
            return "closed"
        if self._prompting:
            return "prompting"
        return "ready" if self.state.session_id else "new"

    # -- observers -----------------------------------------------------------------------

    def subscribe(self, observer: Observer) -> Callable[[], None]:
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    def emit(self, event: LoopEvent) -> None:
        try:
            self.reducer.apply(event)
        except Exception:
            log.exception("the thread failed on %s", event.kind)
        for observer in list(self._observers):
            try:
                observer(event)
            except Exception:
                log.exception("observer %r failed on %s", observer, event.kind)

    def _ask_person(self, request: ApprovalRequest) -> None:
        """A request the rules left open: observers get ApprovalNeeded (a pane queues it
        in the window's one queue), and so does `ask` when given."""
        self.emit(ApprovalNeeded(request))
        if self._ask is not None:
            self._ask(request)

    def _refusal(self, command: str) -> str | None:
        """Why melgui's rules deny this command of the agent's (terminal/create)."""
        if self._policy is None:
            return None
        decision = self._policy.check_operation(
            self.command.origin, AGENT_COMMAND_TOOL, {"command": command}
        )
        return decision.reason if isinstance(decision, Deny) else None

    def _tell(self, text: str) -> None:
        self.emit(ContextNotice(text, "warning"))

    def _on_update(self, session_id: str, update: Any) -> None:
        if session_id == self.state.session_id:
            self.translator.update(update)

    # -- start ---------------------------------------------------------------------------

    async def start(self, resume: str | None = None) -> None:
        """Spawn the agent, initialize it, and open a session (or load `resume`).

        Raises AuthRequired (call `authenticate`, then `open_session`), AgentFailed.
        """
        try:
            self.process = await self._spawn(self.command, self.cwd, self.env)
        except AgentStartError as exc:
            raise self._failed(str(exc)) from None
        self.connection = connect_to_agent(self._client, self.process.messages)
        self._watch = asyncio.get_running_loop().create_task(self._watch_exit(self.process))
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True), terminal=True
        )
        reply = await self._call(
            self.connection.initialize(
                protocol_version=PROTOCOL_VERSION,
                client_capabilities=capabilities,
                client_info=Implementation(name="melgui", title="melgui", version="0"),
            ),
            "initialize",
            self.start_timeout,
        )
        if reply.agent_info is not None:
            self.state.agent_info = f"{reply.agent_info.name} {reply.agent_info.version}".strip()
        capabilities_of_agent = reply.agent_capabilities
        self.state.can_load = bool(capabilities_of_agent and capabilities_of_agent.load_session)
        sessions = capabilities_of_agent.session_capabilities if capabilities_of_agent else None
        self.state.can_resume = bool(sessions and sessions.resume is not None)
        mcp = capabilities_of_agent.mcp_capabilities if capabilities_of_agent else None
        self.mcp_http = bool(mcp and mcp.http)
        self.state.auth_methods = [
            Choice(m.id, m.name, m.description or "") for m in (reply.auth_methods or [])
        ]
        await self.open_session(resume)

    async def authenticate(self, method_id: str) -> None:
        connection = self._connected()
        await self._call(connection.authenticate(method_id=method_id), "authenticate", None)

    async def open_session(self, resume: str | None = None) -> None:
        connection = self._connected()
        servers, self.mcp_left_out = mcp_entries(self.mcp_servers, http=self.mcp_http)
        if self.mcp_left_out:
            left_out = ", ".join(self.mcp_left_out)
            self.emit(ContextNotice(f"MCP servers not given to the agent: {left_out}."))
        try:
            if resume:
                await self._reopen(connection, resume, servers)
                return
            reply = await self._call(
                connection.new_session(cwd=self.cwd, mcp_servers=servers),
                "session/new",
                self.start_timeout,
            )
        except RequestError as exc:
            if exc.code == AUTH_REQUIRED:
                raise AuthRequired(self.state.auth_methods) from None
            raise self._failed(f"session/new: {exc}") from None
        self.state.session_id = reply.session_id
        self.state.set_modes(reply.modes)
        self.state.set_config(reply.config_options)

    async def _reopen(
        self, connection: ClientSideConnection, session_id: str, servers: list[McpEntry]
    ) -> None:
        """session/load (the history is replayed into the chat), else session/resume."""
        if not (self.state.can_load or self.state.can_resume):
            raise self._failed("this agent cannot load or resume a saved session")
        self.state.session_id = session_id
        if self.state.can_load:
            reopened: Any = await self._call(
                connection.load_session(cwd=self.cwd, session_id=session_id, mcp_servers=servers),
                "session/load",
                None,
            )
        else:
            reopened = await self._call(
                connection.resume_session(cwd=self.cwd, session_id=session_id, mcp_servers=servers),
                "session/resume",
                self.start_timeout,
            )
        self.translator.end_turn(cancelled=False)
        if reopened is not None:
            self.state.set_modes(reopened.modes)
            self.state.set_config(reopened.config_options)

    # -- turns ---------------------------------------------------------------------------

    async def prompt(self, text: str) -> str:
        """Send one prompt and wait for its end; returns the stop reason.

        Failures become a TurnFailed event and the stop reason "failed" (the host stays
        usable when the agent still runs).
        """
        connection = self._connected()
        self.translator.user_sent(text)
        self._prompting, self._cancelled = True, False
        self._turn_over.clear()
        try:
            reply = await self._call(
                connection.prompt(session_id=self.state.session_id, prompt=[text_block(text)]),
                "session/prompt",
                None,
            )
        except (AgentFailed, RequestError) as exc:
            self.translator.end_turn(cancelled=False)
            self.emit(TurnFailed(str(exc)))
            return "failed"
        except asyncio.CancelledError:
            self.translator.end_turn(cancelled=True)
            self.emit(TurnCancelled())
            raise
        finally:
            self._prompting = False
            self._turn_over.set()
            self.gate.cancel_all("The turn ended.")
        stop = str(reply.stop_reason)
        if self.settle is not None:
            await self.settle()
        self.translator.end_turn(cancelled=stop == "cancelled")
        if stop == "cancelled" or self._cancelled:
            self.emit(TurnCancelled())
            return "cancelled"
        usage = Usage()
        if reply.usage is not None:
            usage = Usage(
                prompt_tokens=reply.usage.input_tokens, completion_tokens=reply.usage.output_tokens
            )
        self.usage = self.usage + usage
        if stop in ("max_tokens", "max_turn_requests", "refusal"):
            self.emit(ContextNotice(f"The agent stopped: {stop.replace('_', ' ')}.", "warning"))
        self.emit(TurnFinished(1, usage))
        return stop

    async def cancel(self) -> None:
        """session/cancel, and wait (`cancel_grace` s) for the turn to end; open permission
        requests are answered `cancelled` at once. An agent that goes on regardless is
        ended: the host fails with its stderr tail, and its process group is killed."""
        self._cancelled = True
        self.gate.cancel_all("The turn was cancelled.")
        if self.connection is None or not self._prompting or self.failure:
            return
        with contextlib.suppress(ConnectionError, RequestError):
            await self.connection.cancel(session_id=self.state.session_id)
        try:
            await within(self._turn_over.wait(), self.cancel_grace)
        except TimeoutError:
            await self._end_hung_turn()

    async def _end_hung_turn(self) -> None:
        if self.failure or self.process is None:
            return
        tail = self.process.stderr_now()
        self._failed(
            f"the agent did not end its turn within {self.cancel_grace:g} s of session/cancel; "
            "it was ended" + (f". Its last words:\n{tail}" if tail else "")
        )
        self.process.end_group()  # the running prompt sees the exit and reports the failure

    async def set_mode(self, mode_id: str) -> None:
        connection = self._connected()
        await self._call(
            connection.set_session_mode(session_id=self.state.session_id, mode_id=mode_id),
            "session/set_mode",
            self.start_timeout,
        )
        self.state.set_mode(mode_id)

    async def set_model(self, value: str) -> None:
        connection = self._connected()
        if not self.state.model_option:
            raise AgentFailed("this agent offers no model choice")
        reply = await self._call(
            connection.set_config_option(
                config_id=self.state.model_option, session_id=self.state.session_id, value=value
            ),
            "session/set_config_option",
            self.start_timeout,
        )
        if reply is not None and reply.config_options:
            self.state.set_config(reply.config_options)
        else:
            self.state.set_model(value)

    # -- failure and end -----------------------------------------------------------------

    def _connected(self) -> ClientSideConnection:
        if self.failure:
            raise AgentFailed(self.failure)
        if self.connection is None:
            raise AgentFailed("the agent is not started")
        return self.connection

    def _failed(self, text: str) -> AgentFailed:
        if not self.failure:
            self.failure = text
        return AgentFailed(self.failure)

    async def _call(self, request: Awaitable[T], what: str, timeout: float | None) -> T:
        """`request`, unless the agent exits (or `timeout` passes) first: then the host
        fails, saying how."""
        assert self.process is not None
        try:
            return await answer_or_exit(self.process, request, what, timeout)
        except AgentEnded as exc:
            raise self._failed(str(exc)) from None

    async def _watch_exit(self, process: AgentProcess) -> None:
        """An agent that ends between turns fails the pane at once (during a turn, the
        turn's request says so)."""
        code = await process.wait()
        if self._closing or self._prompting or self.failure:
            return
        tail = await process.stderr_tail()
        self._failed(
            f"the agent exited (code {code})" + (f"; its last words:\n{tail}" if tail else "")
        )
        self.emit(TurnFailed(self.failure))

    async def aclose(self) -> None:
        """End the session: open requests cancelled, terminals and the process ended."""
        self._closing = True
        self.gate.cancel_all("The agent's pane was closed.")
        await self.terminals.close()
        if self.connection is not None:
            with contextlib.suppress(Exception):
                await self.connection.close()
        if self.process is not None:
            await self.process.stop()
        if self._watch is not None:
            self._watch.cancel()

    def kill_now(self) -> None:
        """No event loop to close gracefully (the app is ending): kill the agent."""
        self._closing = True
        self.gate.cancel_all("The agent's pane was closed.")
        if self.process is not None:
            self.process.kill_now()
