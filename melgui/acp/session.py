"""One ACP session: a melgui desk on the session's folder, its agent session, and what
goes to the client (updates, plans, permission requests)."""

from __future__ import annotations

import asyncio
import logging
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from acp import update_plan
from acp.interfaces import Client

from melgui.acp.client_mcp import write_client_servers
from melgui.acp.commands import CustomCommands
from melgui.acp.outbox import Outbox
from melgui.acp.permissions import OPTIONS, Rejections, resolve
from melgui.acp.plan_entries import plan_entries
from melgui.acp.updates import UpdateMapper, merge_text
from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.catalog import Role
from melgui.core.protocol.events import Usage
from melgui.core.thread.changes import Change, EntryChanged, StateChanged
from melgui.core.thread.entries import CallEntry
from melgui.desk.desk import Desk
from melgui.desk.recording import Recording
from melgui.tools.panes import NoPanes

log = logging.getLogger(__name__)


class AcpSession:
    def __init__(
        self,
        session_id: str,
        client: Client,
        folder: str,
        settings: Settings,
        *,
        api_key: str | None,
        model: str,
        role: Role,
        recording: Recording | None = None,
    ) -> None:
        """With a `recording`, the session goes on with (and journals into) its stored
        conversation, whose id should be `session_id`."""
        self.id = session_id
        self.client = client
        self.recording = recording
        self.turn_usage: Usage | None = None  # of the last finished turn
        self.outbox = Outbox(self._send, merge_text)
        self.desk = Desk(folder, settings, api_key=api_key, plans=self._plan)
        self.desk.panes = NoPanes("this session runs under an ACP client (melgui acp)")
        # The desk's rules (with the defaults of run-time tools: MCP), behind the
        # client's "always reject" answers.
        self.rejections = Rejections(self.desk.policy)
        self.mapper = UpdateMapper(self.desk.catalog, self.desk.kit.workspace)
        self.session: AgentSession = self.desk.session(
            recording.conversation if recording else None,
            model=model,
            role=role,
            source=f"acp {session_id}",
            wire=recording.record_wire if recording else None,
            policy=self.rejections,
        )
        if recording is not None:
            recording.attach(self.session)
        self._asked: set[str] = set()  # calls whose question went to the client
        self._turns = 0  # turns ended, as the thread last said
        self.session.thread.subscribe(self._observe)
        self.commands = CustomCommands(folder)

    async def start_mcp(self, *, configured: bool = True, passed: Sequence[Any] = ()) -> None:
        """The user's and the (trusted) project's MCP servers, as `melgui exec` starts
        them (with `configured`), and those the client `passed` in session/new; what
        cannot start is said on stderr."""
        with tempfile.TemporaryDirectory(prefix="melgui-acp-mcp-") as folder:
            extra = write_client_servers(passed, Path(folder)) if passed else None
            await self.desk.start_mcp(extra=extra, configured=configured)
        for problem in self.desk.mcp.problems:
            log.warning("MCP: %s", problem)
        if self.desk.mcp.untrusted is not None:
            log.warning(
                "MCP: %s is not trusted yet; trust it in the window", self.desk.mcp.untrusted
            )

    def offer_commands(self) -> None:
        """Tell the client the custom slash commands (after the session is known to it)."""
        update = self.commands.update()
        if update is not None:
            self.outbox.put(update)

    async def replay(self) -> None:
        """Tell the client the conversation so far (`session/load`)."""
        for update in self.mapper.replay(self.session.thread.entries):
            self.outbox.put(update)
        await self.outbox.flush()

    async def _send(self, update: object) -> None:
        await self.client.session_update(self.id, update)  # type: ignore[arg-type]

    def _observe(self, change: Change) -> None:
        thread = self.session.thread
        for update in self.mapper.updates(change):
            self.outbox.put(update)
        match change:
            case StateChanged(state=state):
                if state.turns != self._turns and state.outcome == "done":
                    self.turn_usage = state.usage
                self._turns = state.turns
            case EntryChanged(entry=CallEntry(phase="waiting", call=call)):
                request = thread.request(call.id)
                if request is not None and call.id not in self._asked:
                    self._asked.add(call.id)
                    self.outbox.start(lambda: self._ask(request))
            case _:
                pass

    async def _plan(self, title: str, markdown: str) -> None:
        self.outbox.put(update_plan(plan_entries(title, markdown)))
        await self.outbox.flush()

    async def _ask(self, request: ApprovalRequest) -> None:
        """Ask the client; the loop's own answer (a cancelled turn) ends the question."""
        if not request.pending:
            return
        subject = self.mapper.subject(request.call)
        asking = asyncio.ensure_future(
            self.client.request_permission(
                session_id=self.id, tool_call=subject, options=list(OPTIONS)
            )
        )
        request.future.add_done_callback(lambda _: asking.cancel())
        try:
            response = await asking
        except asyncio.CancelledError:
            if request.pending:
                raise
            return
        except Exception as exc:
            log.warning("permission request failed: %s", exc)
            request.deny(f"the client could not be asked: {exc}")
            return
        resolve(request, response, self.rejections)

    async def aclose(self) -> None:
        await self.session.aclose()
        await self.outbox.flush()
        await self.outbox.aclose()
        await self.desk.aclose()
        if self.recording is not None:
            self.recording.close()
            self.recording.store.close()
