"""The MCP servers an ACP client passes in `session/new`, as an mcpServers file the
session's desk starts beside the configured ones (a client's choice is trusted as a file
named on the command line is). melgui speaks stdio and streamable HTTP, not SSE."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any


def client_entries(servers: Sequence[Any]) -> dict[str, dict[str, Any]]:
    """ACP McpServer entries (stdio, http, sse) in the mcpServers shape, by name."""
    entries: dict[str, dict[str, Any]] = {}
    for server in servers:
        kind = getattr(server, "type", None) or "stdio"
        if kind == "stdio":
            entries[server.name] = {
                "command": server.command,
                "args": list(server.args),
                "env": {v.name: v.value for v in server.env},
            }
        else:  # "sse" is kept so the desk names it as a server it cannot start
            headers = {h.name: h.value for h in server.headers}
            entries[server.name] = {"type": kind, "url": server.url, "headers": headers}
    return entries


def write_client_servers(servers: Sequence[Any], folder: Path) -> Path:
    """The client's servers as `folder/client-mcp.json`, for Desk.start_mcp(extra=…)."""
    path = folder / "client-mcp.json"
    path.write_text(json.dumps({"mcpServers": client_entries(servers)}), encoding="utf-8")
    return path
