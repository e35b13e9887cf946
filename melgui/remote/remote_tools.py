"""A ToolRunner whose workspace tools run on a remote melgui host, one call at a time,
each with its one result (melgui/remote/link.py), and so do the tools of the MCP servers
that run there (`mcp`: the catalog their definitions are in, melgui/remote/remote_mcp.py);
the tools that are not the workspace's (the panes', the language servers') stay with the
runner given for them.

    tools = RemoteTools(link, "/srv/p", local=desk.tools, mcp=servers_there)
    outcome = await tools.run("read_file", {"path": "a"})
"""

from __future__ import annotations

import asyncio
import functools
import uuid
from typing import TYPE_CHECKING, Any

from melgui.core.lsp.diagnostics import DIAGNOSTICS_TOOL, EDITING_TOOLS
from melgui.core.protocol.catalog import ToolCatalog
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import (
    RUNNING_CALL,
    AfterCall,
    CheckpointThere,
    ToolOutcome,
    ToolRunner,
)
from melgui.host.tool_calls import outcome_from_json
from melgui.remote.connect import folder_key
from melgui.remote.link import Link, LinkError
from melgui.remote.remote_hooks import RemoteHooks

if TYPE_CHECKING:
    from melgui.remote.hosts import Place


@functools.cache
def remote_tools() -> frozenset[str]:
    """The workspace tools' names: each runs there (their modules loaded at the first
    ask: a window that runs no tool of its own has no need of them)."""
    from melgui.tools.toolbox import WORKSPACE_TOOLS

    return frozenset(tool.name for tool in WORKSPACE_TOOLS)


def runs_there(name: str, mcp: ToolCatalog | None) -> bool:
    """A workspace tool, the language servers' `diagnostics`, or a tool of an MCP server
    there."""
    if name in remote_tools() or name == DIAGNOSTICS_TOOL.name:
        return True
    tool = mcp.get(name) if mcp is not None else None
    return tool is not None and tool.origin.startswith("mcp:")


class RemoteTools:
    tools = EDITING_TOOLS  # the calls whose step after (the host's diagnostics) it gives

    def __init__(
        self,
        link: Link,
        folder: str,
        *,
        local: ToolRunner | None = None,
        names: frozenset[str] | None = None,  # None: remote_tools()
        options: dict[str, Any] | None = None,
        mcp: ToolCatalog | None = None,
        checkpoint: CheckpointThere | None = None,
    ) -> None:
        self.link = link
        self.checkpoint = checkpoint
        self.folder = folder
        # That machine's settings (sandbox, env, mcp_servers): the place's own dict, so a
        # project file trusted later (project_mcp) reaches this runner's next calls.
        self.options = options if options is not None else {}
        self.local = local
        self.names = names if names is not None else remote_tools()
        self.mcp = mcp
        # Call ids are this runner's, unique per call it sends (a model's ids may repeat).
        self._prefix = uuid.uuid4().hex[:12]
        self._count = 0
        # What the host added after an edit there (its language servers' new errors), by
        # the model's call id, until the loop's step after the call takes it.
        self._after: dict[str, AfterCall] = {}

    def hooks_there(self) -> RemoteHooks:
        """The folder's own hooks there, run while its calls carry the trust (the options'
        `diagnostics`: a configured host's always, a remote folder's as it is trusted)."""

        async def reach() -> tuple[Link, str]:
            return self.link, self.folder

        trusted = lambda: bool(self.options.get("diagnostics"))  # noqa: E731
        return RemoteHooks(reach, trusted=trusted, where=folder_key(self.link.target))

    def _there(self, name: str) -> bool:
        return name in self.names or (name not in remote_tools() and runs_there(name, self.mcp))

    def knows(self, name: str) -> bool:
        return self._there(name) or (self.local is not None and self.local.knows(name))

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if not self._there(name):
            if self.local is None:
                return ToolOutcome.error(f"Unknown tool {name!r}.")
            return await self.local.run(name, arguments)
        self._count += 1
        running = RUNNING_CALL.get()
        call_id = f"{self._prefix}/{self._count}" + (f"/{running[1]}" if running else "")
        mark = self._mark(name, arguments, running)
        outcome = await self.link.run_call(
            call_id, self.folder, name, arguments, self.options, checkpoint=mark
        )
        after = outcome.get("after")
        if running is not None and name in self.tools and isinstance(after, dict):
            notes = tuple(str(note) for note in after.get("notes") or ())
            self._after[running[1]] = AfterCall(str(after.get("context", "")), notes=notes)
        return outcome_from_json(outcome)

    async def after_call(
        self, call: ToolCall, arguments: dict[str, Any], status: str, content: str
    ) -> AfterCall:
        """The step after a call (as a local folder's diagnostics are): what the host
        there said after it, for the result and the call's card."""
        return self._after.pop(call.id, AfterCall())

    async def restore_checkpoints(
        self, calls: list[str], plan_only: bool, choices: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Put back what these calls changed there (a rewind), by the host there."""
        return await self.link.restore_checkpoints(self.folder, calls, choices, plan_only=plan_only)

    async def ask_there(self, method: str, **params: Any) -> dict[str, Any]:
        """A host method about this folder there (`checkpoint/…`, `changes/uncommitted`)."""
        return await self.link.about_folder(method, self.folder, **params)

    def _mark(
        self, name: str, arguments: dict[str, Any], running: tuple[str, str, str] | None
    ) -> dict[str, Any] | None:
        """What the host there records the call's checkpoint under: the model's call id
        (a rewind here names the calls by it), the summary and who made it."""
        summary = self.checkpoint(name, arguments) if self.checkpoint else None
        if summary is None or running is None:
            return None
        return {"call": running[1], "summary": summary, "source": running[0]}


class PendingRemoteTools:
    """RemoteTools for a place still being reached (the window opens on a remote folder
    at once; its link connects, maybe asking the person, meanwhile). A call made before
    waits for the link; one made when it could not be reached gets that as its result."""

    tools = EDITING_TOOLS

    def __init__(
        self,
        place: asyncio.Future[Place],
        *,
        local: ToolRunner | None = None,
        mcp: ToolCatalog | None = None,
        checkpoint: CheckpointThere | None = None,
        hooks: RemoteHooks | None = None,
    ) -> None:
        """`hooks`: the folder's own hooks there (the window's, trusted by its URL)."""
        self.place = place
        self.hooks = hooks
        self.local = local
        self.mcp = mcp
        self.checkpoint = checkpoint
        self._tools: RemoteTools | None = None

    def knows(self, name: str) -> bool:
        return runs_there(name, self.mcp) or (self.local is not None and self.local.knows(name))

    def hooks_there(self) -> RemoteHooks | None:
        return self.hooks

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if not runs_there(name, self.mcp):
            if self.local is None:
                return ToolOutcome.error(f"Unknown tool {name!r}.")
            return await self.local.run(name, arguments)
        if self._tools is None:
            try:
                place = await asyncio.shield(self.place)
            except LinkError as exc:
                return ToolOutcome.error(f"{name} did not run: {exc}")
            self._tools = RemoteTools(
                place.link, place.folder, local=self.local, options=place.options, mcp=self.mcp,
                checkpoint=self.checkpoint,
            )  # fmt: skip
        return await self._tools.run(name, arguments)

    async def after_call(
        self, call: ToolCall, arguments: dict[str, Any], status: str, content: str
    ) -> AfterCall:
        if self._tools is None:
            return AfterCall()
        return await self._tools.after_call(call, arguments, status, content)

    async def restore_checkpoints(
        self, calls: list[str], plan_only: bool, choices: dict[str, str] | None = None
    ) -> dict[str, Any]:
        """Put back what these calls changed there, once the folder is reached (raises
        LinkError when it could not be)."""
        place = await asyncio.shield(self.place)
        return await place.link.restore_checkpoints(
            place.folder, calls, choices, plan_only=plan_only
        )

    async def ask_there(self, method: str, **params: Any) -> dict[str, Any]:
        """A host method about the folder there, once the folder is reached."""
        place = await asyncio.shield(self.place)
        return await place.link.about_folder(method, place.folder, **params)
