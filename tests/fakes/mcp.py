"""Helpers for MCP tests: the fake server's configuration (and the user's MCP file that
lists servers), a running manager, an HTTP server process on a free loopback port."""

from __future__ import annotations

import base64
import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from melgui.core.protocol.catalog import ToolCatalog
from melgui.core.protocol.tooling import ToolRegistry
from melgui.core.runtime.processes import reset_signals
from melgui.tools.mcp.config import ServerConfig, user_path
from melgui.tools.mcp.manager import McpManager
from melgui.tools.mcp.server import McpServer
from tests.fakes.mcp_server import PNG

ROOT = Path(__file__).resolve().parents[2]
FAKE = [sys.executable, "-m", "tests.fakes.mcp_server"]
PNG_B64 = base64.b64encode(PNG).decode()


def fake_stdio(name: str = "fake", *extra: str, **fields: Any) -> ServerConfig:
    env = {"PYTHONPATH": str(ROOT), **fields.pop("env", {})}
    return ServerConfig(name, "stdio", command=FAKE[0], args=(*FAKE[1:], *extra), env=env, **fields)


def use_servers(servers: dict[str, Any]) -> None:
    """The user's MCP file (in this test's config folder) lists `servers`, name → entry."""
    user_path().parent.mkdir(parents=True, exist_ok=True)
    user_path().write_text(json.dumps({"mcpServers": servers}))


def fake_entry(*extra: str, **fields: Any) -> dict[str, Any]:
    """The fake server as an mcpServers entry (for files)."""
    return {
        "command": FAKE[0],
        "args": [*FAKE[1:], *extra],
        "env": {"PYTHONPATH": str(ROOT), **fields.pop("env", {})},
        **fields,
    }


def manager_with(folder: str, *configs: ServerConfig, state: Path | None = None) -> McpManager:
    manager = McpManager(
        folder, ToolCatalog(), ToolRegistry(), state_path=state or Path(folder) / "state.json"
    )
    for config in configs:
        manager.servers[config.name] = McpServer(
            config, folder, on_change=manager._changed, on_tools=manager._tools_changed
        )
    return manager


@contextlib.asynccontextmanager
async def running(folder: str, *configs: ServerConfig) -> AsyncIterator[McpManager]:
    manager = manager_with(folder, *configs)
    try:
        await manager.start_all()
        yield manager
    finally:
        await manager.aclose()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@contextlib.contextmanager
def http_server(name: str = "fake", *, legacy: bool = False) -> Iterator[str]:
    """The fake server over streamable HTTP (or the legacy HTTP+SSE); yields its URL."""
    port = free_port()
    process = subprocess.Popen(
        [*FAKE, "--sse" if legacy else "--http", str(port), "--name", name],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        preexec_fn=reset_signals,
    )
    try:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), 0.2):
                break
            if process.poll() is not None:
                raise RuntimeError("the fake MCP HTTP server exited")
            time.sleep(0.05)
        yield f"http://127.0.0.1:{port}/{'sse' if legacy else 'mcp'}"
    finally:
        process.terminate()
        process.wait(10)


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


@contextlib.contextmanager
def sign_in_server() -> Iterator[str]:
    """An HTTP endpoint that answers every request 401 with an OAuth challenge."""

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.send_response(401)
            self.send_header("WWW-Authenticate", 'Bearer resource_metadata="http://x/.wk"')
            self.send_header("Content-Length", "0")
            self.end_headers()

        do_GET = do_POST

        def log_message(self, format: str, *args: Any) -> None:
            return None

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/mcp"
    finally:
        server.shutdown()
        server.server_close()
