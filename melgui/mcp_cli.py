"""`melgui mcp login NAME` / `melgui mcp logout NAME`: sign in to (or out of) an HTTP MCP
server ahead of time, so a later `melgui exec --no-sign-in` or the window just works.

The server comes from the user's mcp.json, the folder's trusted .melgui/mcp.json, or
--mcp-config. login opens the browser (Python's webbrowser, which honours $BROWSER) and
returns when the sign-in is done; the tokens go to the keyring or the protected file.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from melgui.core.protocol.catalog import ToolCatalog
from melgui.core.protocol.tooling import ToolRegistry
from melgui.tools.mcp.manager import McpManager


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="melgui mcp", description=__doc__.split("\n\n")[0])
    parser.add_argument("action", choices=("login", "logout"))
    parser.add_argument("name", help="the server's name in mcp.json")
    parser.add_argument("--folder", default=".", help="project folder (default: .)")
    parser.add_argument("--mcp-config", metavar="FILE", help="an mcpServers JSON file")
    return parser


async def run(options: argparse.Namespace) -> int:
    folder = os.path.realpath(options.folder)
    manager = McpManager(folder, ToolCatalog(), ToolRegistry())
    manager.sign_in_allowed = True
    manager.load(extra=Path(options.mcp_config) if options.mcp_config else None)
    server = manager.servers.get(options.name)
    if server is None:
        known = ", ".join(manager.servers) or "none"
        print(f"melgui mcp: no server named {options.name!r} (servers: {known})", file=sys.stderr)
        return 2
    if server.sign_in is None:
        print(f"melgui mcp: {options.name} does not sign in (not HTTP, or a fixed header)")
        return 2
    if options.action == "logout":
        await manager.sign_out(options.name)
        print(f"Signed out of {options.name}.")
        return 0
    server.sign_in.on_state = lambda text: print(f"{options.name}: {text}", file=sys.stderr)
    try:
        await server.start()
    finally:
        await manager.aclose()
    if not server.sign_in.signed_in():
        print(f"melgui mcp: {options.name}: {server.state.line()}", file=sys.stderr)
        return 1
    print(f"Signed in to {options.name} ({server.sign_in.store.where or 'kept'}).")
    return 0


def main(argv: list[str]) -> int:
    return asyncio.run(run(build_parser().parse_args(argv)))
