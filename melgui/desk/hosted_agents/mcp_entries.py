"""The project's MCP servers as `session/new` hands them to an ACP agent.

Every agent must take stdio servers; HTTP ones only go to an agent whose initialize said
`mcpCapabilities.http` (the protocol's rule), and the rest are named so the person knows.
"""

from __future__ import annotations

from collections.abc import Sequence

from acp.schema import (
    AcpMcpServer,
    EnvVariable,
    HttpHeader,
    HttpMcpServer,
    McpServerStdio,
    SseMcpServer,
)

from melgui.tools.mcp.config import ServerConfig

McpEntry = HttpMcpServer | SseMcpServer | AcpMcpServer | McpServerStdio


def mcp_entries(servers: Sequence[ServerConfig], *, http: bool) -> tuple[list[McpEntry], list[str]]:
    """The entries to send, and the servers left out (each with why)."""
    found: list[McpEntry] = []
    left_out: list[str] = []
    for server in servers:
        if server.disabled or server.problem:
            continue
        if server.kind == "http" and not http:
            left_out.append(f"{server.name} (HTTP, which this agent cannot use)")
        elif server.kind == "http":
            headers = [HttpHeader(name=k, value=v) for k, v in server.headers.items()]
            found.append(
                HttpMcpServer(name=server.name, url=server.url, headers=headers, type="http")
            )
        else:
            env = [EnvVariable(name=k, value=v) for k, v in server.env.items()]
            found.append(
                McpServerStdio(
                    name=server.name, command=server.command, args=list(server.args), env=env
                )
            )
    return found, left_out
