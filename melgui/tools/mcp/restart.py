"""Restart one MCP server as its file says now: the entry is read again (an edited
command, arguments or environment take effect), the person's toggles are kept, and an
edited project file waits for trust again instead of running."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from melgui.tools.mcp.config import ConfigError, load_file
from melgui.tools.mcp.manager import McpManager
from melgui.tools.mcp.server import ServerState


async def restart_reread(manager: McpManager, name: str) -> None:
    server = manager.servers.get(name)
    if server is None:
        return
    config = server.config
    if config.source:
        path = Path(config.source)
        try:
            fresh = {entry.name: entry for entry in load_file(path, config.scope)}.get(name)
        except ConfigError as exc:
            server._set(ServerState("failed", message=f"{path} cannot be read: {exc}"))
            return
        if fresh is not None and fresh != config:
            if config.scope == "project" and not manager.trust.is_trusted(path):
                manager.untrusted = path
                server._set(
                    ServerState("untrusted", message="the file changed: trust it again to start")
                )
                return
            server.config = dataclasses.replace(
                fresh,
                disabled=config.disabled,
                disabled_tools=config.disabled_tools,
                trusted=config.trusted,
            )
    await manager.restart(name)
