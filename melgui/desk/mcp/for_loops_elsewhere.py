"""MCP servers a host runs for a loop elsewhere (a remote folder, a worker on this
machine): the view sends their `mcpServers` entries with a call's options, this machine
starts them once per folder and entries, and their tools join the registry that folder's
calls run in, under the names melgui gives MCP tools everywhere.

    servers = HostedMcp(folder, registry, entries, env={"STAGE": "ci"})
    await servers.ready()                       # every server ready or failed
    servers.describe()                          # [{name, status, line, tools: [ToolDef json]}]
    servers.gone("mcp__db__query")              # why a call to a withdrawn tool cannot run

The entries come from the person's configuration there (their `mcp.json` on the view's
machine): `${VAR}` and `${keyring:NAME}` are resolved here, from this machine's
environment and keyring; a reference travels as written, never its value. A server's
requests for input or for a model's answer are declined: nobody is here to answer them.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from melgui.core.protocol.catalog import ROLES, ToolCatalog, ToolDef
from melgui.core.protocol.tooling import ToolRegistry
from melgui.tools.mcp.config import (
    PROJECT_FILE,
    ConfigError,
    ServerConfig,
    parse_server,
    project_path,
    read_entries,
)
from melgui.tools.mcp.manager import McpManager
from melgui.tools.mcp.trust import digest

if TYPE_CHECKING:
    from melgui.tools.mcp.server import McpServer

# The name a view's call gives to hear this folder's servers once they are ready: a
# slash keeps it out of every name a model may call.
MCP_SERVERS = "mcp/servers"
SOURCE = "the view's MCP configuration"
PROBLEM = "_melgui_problem"  # an entry made here for a server that must not start


def tool_to_json(tool: ToolDef) -> dict[str, Any]:
    return {
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.parameters,
        "roles": list(tool.roles),
        "read_only": tool.read_only,
        "summary_argument": tool.summary_argument,
        "origin": tool.origin,
    }


def tool_from_json(data: dict[str, Any]) -> ToolDef:
    roles = tuple(role for role in ROLES if role in (data.get("roles") or ROLES))
    return ToolDef(
        str(data["name"]),
        str(data.get("description") or ""),
        dict(data.get("parameters") or {"type": "object", "properties": {}}),
        roles=roles,
        read_only=bool(data.get("read_only")),
        summary_argument=data.get("summary_argument"),
        origin=str(data.get("origin") or "mcp:"),
    )


def project_file(folder: str) -> dict[str, Any]:
    """The folder's own `.melgui/mcp.json` here, as a view asks about it before trusting
    it: `{path, digest, names}` (`path` None: there is none; `problem`: unreadable)."""
    path = project_path(folder)
    if not path.is_file():
        return {"path": None}
    found: dict[str, Any] = {"path": str(path), "digest": digest(path), "names": []}
    try:
        found["names"] = sorted(read_entries(path))
    except ConfigError as exc:
        found["problem"] = str(exc)
    return found


def project_entries(folder: str, trusted: str) -> dict[str, Any]:
    """The folder's own servers when its file is still as the person trusted it (the
    SHA-256 `trusted`); else each is an entry that fails saying the file changed."""
    path = project_path(folder)
    try:
        entries = read_entries(path)
    except ConfigError:
        return {}
    if digest(path) == trusted:
        return entries
    changed = f"{PROJECT_FILE} there changed since it was trusted: trust it again to start it"
    return {name: {PROBLEM: changed} for name in entries}


def configs_of(entries: dict[str, Any], env: dict[str, str]) -> list[ServerConfig]:
    """The servers of `entries`; one that cannot be used keeps its problem (it fails in
    words when started). `env` (this machine's settings) is under each server's own."""
    configs = []
    for name, entry in sorted(entries.items()):
        try:
            if isinstance(entry, dict) and PROBLEM in entry:
                raise ConfigError(str(entry[PROBLEM]))
            config = parse_server(str(name), entry, scope="file", source=SOURCE)
        except ConfigError as exc:
            config = ServerConfig(str(name), "stdio", scope="file", source=SOURCE, problem=str(exc))
        if env and config.kind == "stdio":
            config = dataclasses.replace(config, env={**env, **config.env})
        configs.append(config)
    return configs


class HostedMcp:
    def __init__(
        self,
        folder: str,
        registry: ToolRegistry,
        entries: dict[str, Any],
        *,
        env: dict[str, str] | None = None,
    ) -> None:
        self.catalog = ToolCatalog()
        # The person's toggles were applied where the entries were read: none here.
        self.manager = McpManager(folder, self.catalog, registry, state_path=Path(os.devnull))
        self.manager.added = configs_of(entries, env or {})
        self.manager.load(user=False, project=False)
        self._starting = asyncio.get_running_loop().create_task(self.manager.start_all())
        # Told (at most once a frame) when a server's state changes after they started:
        # one that dies, one restarted.
        self.on_change: Callable[[list[dict[str, Any]]], None] | None = None
        self._telling: asyncio.Handle | None = None
        self.manager.subscribe(lambda _server: self._changed())

    def _changed(self) -> None:
        if self._telling is None and self._starting.done():
            self._telling = asyncio.get_running_loop().call_later(0.05, self._tell)

    def _tell(self) -> None:
        self._telling = None
        if self.on_change is not None:
            self.on_change(self.describe())

    async def restart(self, name: str) -> list[dict[str, Any]]:
        """Start `name` again (the MCP panel's Restart for a server here); the servers as
        they are once it is ready or failed."""
        await self.ready()
        if name not in self.manager.servers:
            raise KeyError(name)
        await self.manager.restart(name)
        return self.describe()

    async def ready(self) -> None:
        """Once every server is ready or failed (a failure is its state, never raised)."""
        await asyncio.shield(self._starting)

    def gone(self, name: str) -> str:
        """Why a call to `name` cannot run here now ("" when it can): the loop here would
        have refused it so."""
        return self.catalog.gone(name)

    def describe(self) -> list[dict[str, Any]]:
        return [_described(self.manager, server) for server in self.manager.servers.values()]

    async def aclose(self) -> None:
        self._starting.cancel()
        await asyncio.gather(self._starting, return_exceptions=True)
        await self.manager.aclose()


def _described(manager: McpManager, server: McpServer) -> dict[str, Any]:
    names = manager.bridge.origin_names(server.config.origin)
    tools = [tool_to_json(tool) for name in names if (tool := manager.bridge.catalog.get(name))]
    return {
        "name": server.name,
        "status": server.state.status,
        "line": server.state.line(),
        "describe": server.config.describe(),
        "tools": tools,
    }
