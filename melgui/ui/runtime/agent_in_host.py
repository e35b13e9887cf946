"""RemoteAgentSession: an ACP agent the melgui host runs (its program the host's child), seen
from a view's agent pane with the surface the pane uses of a HostedAgentSession: the
agent's state (`agent`: modes, models, commands, sign-in, failure, and its plan and
terminals as the host relays them), `started` (its `start`), `sign_in`.

    session = RemoteAgentSession.open(client, folder="/p", command=cmd, source="claude 2")
    await session.started()      # AuthRequired, AgentFailed as a HostedAgentSession's
    session.agent.state.listen(redraw)

The rest is a RemoteSession's: the thread's changes, prompts, the agent's permission
requests as approvals that wait in the host (answered in any view, with the agent's own
options), Keep running in the background, a reattach. A new host never takes it over: the
agent ended with the host that ran it, and the pane says so.
"""

from __future__ import annotations

import asyncio
from dataclasses import replace
from typing import Any, cast, get_args

from melgui.core.protocol.views.agent_commands import AgentCommand, parse_command
from melgui.core.protocol.views.agent_state import AgentFailed, AgentState, AuthRequired
from melgui.core.protocol.views.relayed_copies import PLAN, RECORDS, PlanCopy, TerminalCopies
from melgui.core.thread.entries import CallResult, NoteEntry
from melgui.host.changes import Record
from melgui.host.client import SessionClient
from melgui.host.remote_session import RemoteSession
from melgui.host.session import AGENT, AgentPhase
from melgui.host.wire import RpcError

ENDED = (
    "The melgui host stopped unexpectedly, and this ACP agent ran in it: the agent ended "
    "with the host, and its turn with it. Open a new agent pane to go on (Reopen agent "
    "session… continues its session, for an agent that can load one)."
)
ENDED_SHORT = "the agent ended with the melgui host"
# The pane's header, under its name.
ENDED_HEADER = "The agent ended with the melgui host, which stopped unexpectedly."


class AgentMirror:
    """The agent as the host says it is: what the pane reads and the changes it asks."""

    def __init__(self, session: RemoteAgentSession, command: AgentCommand, cwd: str) -> None:
        self._session = session
        self.command = command
        self.cwd = cwd
        self.state = AgentState(command.name)
        self.phase: AgentPhase = "starting"
        self.failure = ""
        self.heard = asyncio.Event()  # the host said where the agent is, past starting
        self.plan = PlanCopy(self.state)  # its plan, to the window's plans panel
        self.terminals = TerminalCopies()  # its terminals, the pane's tabs

    def take(self, said: dict[str, Any]) -> None:
        """The host's `agent` record, or a snapshot's: {phase, failure, state}."""
        self.state.take_json(said.get("state") or {})
        phase = str(said.get("phase"))
        self.phase = cast(AgentPhase, phase) if phase in get_args(AgentPhase) else "starting"
        self.failure = str(said.get("failure") or "") or self.failure
        if self.phase != "starting":
            self.heard.set()

    def ended(self, why: str) -> None:
        self.failure, self.phase = why, "failed"
        self.heard.set()
        self.state.changed()

    async def set_mode(self, mode_id: str) -> None:
        await self._session.ask("agent/mode", mode=mode_id)
        self.state.set_mode(mode_id)

    async def set_model(self, value: str) -> None:
        await self._session.ask("agent/model", model=value)
        self.state.set_model(value)


class RemoteAgentSession(RemoteSession):
    def __init__(
        self, client: SessionClient, *, folder: str, command: AgentCommand, source: str
    ) -> None:
        super().__init__(client, folder=folder, model=command.name, source=source)
        self.agent = AgentMirror(self, command, folder)
        self.agent.terminals.send = self._keys
        self.loop.heard({"role": "worker"})

    @classmethod
    def open(
        cls,
        client: SessionClient,
        *,
        folder: str,
        command: AgentCommand,
        source: str,
        resume: str | None = None,
    ) -> RemoteAgentSession:
        """Start the agent in the host (in the background) and attach to its session;
        `resume`: the agent's id of an earlier session, reopened."""
        session = cls(client, folder=folder, command=command, source=source)
        sent = {"name": command.name, "argv": list(command.argv), "env": dict(command.env)}
        params: dict[str, Any] = {"folder": folder, "agent": sent, "source": source}
        if resume:
            params["resume"] = resume
        session._spawn(session._open(params))
        return session

    @classmethod
    def described(cls, client: SessionClient, described: dict[str, Any]) -> RemoteAgentSession:
        """One the host runs already (`session/list`'s, with its `agent`)."""
        said = described[AGENT]
        command = parse_command(str(said["command"]), str(said["name"]))
        source = str(described.get("source") or command.name)
        return cls(client, folder=described["folder"], command=command, source=source)

    # -- a HostedAgentSession's surface, for the pane --------------------------------------

    async def started(self) -> None:
        """Until the host says the agent runs; raises AuthRequired (then `sign_in`) or
        AgentFailed, as a HostedAgentSession's does."""
        lost = asyncio.ensure_future(self._lost.wait())
        heard = asyncio.ensure_future(self.agent.heard.wait())
        try:
            await asyncio.wait({lost, heard}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            lost.cancel()
            heard.cancel()
        if self.agent.phase == "sign_in":
            raise AuthRequired(self.agent.state.auth_methods)
        if self.agent.phase != "ready":
            raise AgentFailed(self.agent.failure or self.problem or "the agent did not start")

    async def sign_in(self, method_id: str) -> None:
        try:
            await self.ask("agent/sign_in", method_id=method_id)
        except RpcError as exc:
            raise AgentFailed(exc.message) from None

    def _keys(self, terminal_id: str, data: bytes) -> None:
        """Keys typed in a tab of the agent's terminal, to its program in the host."""
        keys = data.decode("utf-8", errors="replace")
        self._command("agent/terminal_input", {"terminal": terminal_id, "data": keys})

    # -- the host's word -------------------------------------------------------------------

    def heard(self, records: list[Record]) -> None:
        for record in records:
            kind = record.get("type")
            if kind == AGENT:
                self.agent.take(record)
            elif kind == PLAN:
                self.agent.plan.take(record)
            elif kind in RECORDS:
                self.agent.terminals.heard(record)
        super().heard(records)

    def _took(self, snapshot: dict[str, Any], replay: bool = True) -> None:
        super()._took(snapshot, replay)
        if AGENT in snapshot:
            said = snapshot[AGENT]
            self.agent.take(said)
            self.agent.plan.take(said.get(PLAN))
            self.agent.terminals.took(said.get("terminals") or [])

    def host_ended(self, why: str, failure: str) -> None:
        self.agent.ended(ENDED_HEADER)
        super().host_ended(ENDED, ENDED_SHORT)
        self._interrupt_calls()

    def _interrupt_calls(self) -> None:
        """The calls that waited or ran end on their cards: no host will say their end."""
        for entry in self.thread.calls():
            if entry.open:
                ended = CallResult("interrupted", ENDED_SHORT)
                self.thread.change(replace(entry, phase="interrupted", result=ended))

    def end(self, why: str) -> None:
        """No new host takes an agent over: said in the agent's own words (once in the
        chat), whatever the window would say of a conversation; the pane's header says
        it failed."""
        said = self.problem == ENDED
        self.agent.ended(ENDED_HEADER)
        self._outbox.clear()
        self._opened.set()  # what is sent from now on fails, in words
        if not said:
            self.thread.add(NoteEntry(self.thread.new_id(), "context", ENDED, "warning"))
            self._interrupt_calls()
        self.lose(ENDED_SHORT)


def view_of(client: SessionClient, described: dict[str, Any]) -> RemoteSession:
    """A view of a session `session/list` described: an ACP agent's is a
    RemoteAgentSession, the others RemoteSessions."""
    if described.get(AGENT):
        return RemoteAgentSession.described(client, described)
    return RemoteSession.of(client, described)
