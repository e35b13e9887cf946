"""An ACP agent the host runs for a view's agent pane (`session/open` with `agent`): its
program is the host's child, its ACP client and permission gate run here, its thread's
changes go to the views as a worker's do, and its state (modes, models, commands, sign-in,
failure) as `agent` records. A new host never reopens one: the agent ended with the host
before it.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Any, cast

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.loop_events import LoopEvent, TurnCancelled, TurnFailed, TurnFinished
from melgui.desk.desk import Desk
from melgui.desk.hosted_agents.host import AgentFailed, AuthRequired
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.host.agent_records import Phase, agent_json
from melgui.host.change_journal import SessionRow
from melgui.host.changes import ChangeLog
from melgui.host.session import HostedSession

log = logging.getLogger(__name__)

AGENT = "agent"  # a session row's setting: the ACP agent it runs ({name, command})


class HostedAgent(HostedSession):
    """One ACP agent session in the host; it starts at once (`phase` says how far)."""

    def __init__(
        self, row: SessionRow, acp: HostedAgentSession, log: ChangeLog, desk: Desk
    ) -> None:
        # HostedAgentSession has the surface of an AgentSession a HostedSession uses
        super().__init__(row, cast(AgentSession, acp), None, log, desk)
        self.acp = acp
        self.phase: Phase = "starting"
        self._told: dict[str, Any] = {}
        acp.host.state.listen(self.tell)
        self._starting = asyncio.get_running_loop().create_task(self._start())

    async def _start(self) -> None:
        try:
            await self.acp.start()
        except AuthRequired:
            self.phase = "sign_in"
        except AgentFailed:
            self.phase = "failed"
        except Exception:  # said as the failure, never left to the loop
            log.exception("the agent of session %s did not start", self.id)
            self.phase = "failed"
        else:
            self.phase = "ready"
        self.tell()

    def tell(self) -> None:
        """The agent's state as it is now, to the views (an `agent` record), when it
        changed since it was last told."""
        said = self.agent_json()
        if said != self._told:
            self._told = said
            self.log.add({"type": AGENT, **said})

    def agent_json(self) -> dict[str, Any]:
        failure = self.acp.host.failure
        return agent_json(self.acp.host.state, "failed" if failure else self.phase, failure)

    def _observe(self, event: LoopEvent) -> None:
        super()._observe(event)
        if isinstance(event, TurnFinished | TurnFailed | TurnCancelled):
            self.tell()  # a failure the turn met (the agent died) is the agent's too

    def plan_on(self) -> bool:
        return False  # an ACP agent plans in its own way: its plan is in its state

    async def sign_in(self, method: str) -> None:
        """Sign in with one of the methods the agent offered, then open its session;
        raises AgentFailed, AuthRequired."""
        host = self.acp.host
        await host.authenticate(method)
        await host.open_session()
        self.acp.mark_started()
        self.phase = "ready"
        self.tell()

    async def set_mode(self, mode: str) -> None:
        await self.acp.host.set_mode(mode)

    async def set_model(self, model: str) -> None:
        await self.acp.host.set_model(model)

    def snapshot(self, page: int | None = None) -> dict[str, Any]:
        return {**super().snapshot(page), AGENT: self.agent_json()}

    def describe(self) -> dict[str, Any]:
        return {**super().describe(), AGENT: self.row.settings.get(AGENT)}

    async def aclose(self) -> None:
        self._starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._starting
        await super().aclose()
