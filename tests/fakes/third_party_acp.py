"""Third-party ACP agents for tests: the process, the SDK's client side, the wire log.

The agents themselves (OpenCode, Codex) and their offline configurations are in
tests/fakes/third_party_agents.py; `.ci/run` installs them under .ci/node (versions pinned
by .ci/node/package.json and package-lock.json).

    agent = opencode_agent(server, tmp_path)
    async with AgentProcess(agent) as running:
        await running.initialize()
        session = await running.connection.new_session(cwd=str(agent.cwd), mcp_servers=[])
        running.wire.messages                  # every JSON-RPC message, both ways

An absent agent binary skips the test, except in CI (`CI=true`), where it fails.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pytest
from acp import PROTOCOL_VERSION, RequestError, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities, FileSystemCapabilities, ReadTextFileResponse

from melgui.core.protocol.views.agent_commands import AgentCommand
from tests.fakes.acp_client import RecordingClient

ROOT = Path(__file__).resolve().parents[2]
NODE_PREFIX = ROOT / ".ci" / "node"
# Variables of the agents' own, or model keys, that must not reach them from this machine.
STDERR_TAIL = 16_000
PRIVATE_PREFIXES = ("OPENCODE_", "CODEX_", "OPENAI_", "ANTHROPIC_", "XDG_")


def pinned_version(package: str) -> str:
    """The version .ci/node/package.json pins for an npm package."""
    manifest = json.loads((NODE_PREFIX / "package.json").read_text())
    return str(manifest["dependencies"][package])


def require_binary(name: str, package: str) -> Path:
    """The installed launcher `name` of `package`; skips the test when it is absent, fails
    it in CI (where .ci/run must have installed it)."""
    binary = NODE_PREFIX / "node_modules" / ".bin" / name
    if binary.exists():
        return binary
    reason = f"{package} is not installed: run `npm install --prefix .ci/node`"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (.ci/run must install it)")
    pytest.skip(reason)


@dataclass(frozen=True)
class ThirdPartyAgent:
    """How to start one third-party ACP agent: argv, environment overrides, its folder."""

    name: str
    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path
    home: Path

    def full_env(self) -> dict[str, str]:
        """The child's whole environment: this machine's, without the agent's own variables
        or any model keys, plus `env`."""
        inherited = {k: v for k, v in os.environ.items() if not k.startswith(PRIVATE_PREFIXES)}
        return {**inherited, **self.env}

    def command(self) -> AgentCommand:
        """The agent as melgui's ACP client starts it (`AcpHost`, an agent pane)."""
        return AgentCommand(self.name, self.argv, dict(self.env))


@dataclass
class WireLog:
    """Every JSON-RPC message on the agent's stdio, in order: ("out"|"in", message)."""

    messages: list[tuple[str, dict[str, Any]]] = field(default_factory=list)

    def __call__(self, event: StreamEvent) -> None:
        direction = "out" if event.direction is StreamDirection.OUTGOING else "in"
        self.messages.append((direction, dict(event.message)))

    def requests_from_agent(self) -> list[dict[str, Any]]:
        """Requests the agent sent the client (method and id both present)."""
        return [m for d, m in self.messages if d == "in" and "method" in m and "id" in m]

    def methods(self) -> list[str]:
        return [str(m.get("method")) for _d, m in self.messages if "method" in m]

    def dump(self, path: Path) -> None:
        lines = (json.dumps({"dir": d, **m}) for d, m in self.messages)
        path.write_text("\n".join(lines) + "\n")


class FileClient(RecordingClient):
    """RecordingClient that also answers fs/read_text_file and fs/write_text_file inside
    the agent's folder (relative paths taken from there), recording each write."""

    def __init__(self, cwd: Path) -> None:
        super().__init__()
        self.cwd = cwd.resolve()
        self.writes: list[tuple[str, str]] = []

    def _inside(self, path: str) -> Path:
        resolved = (self.cwd / path).resolve()
        if not resolved.is_relative_to(self.cwd):
            raise RequestError.invalid_params({"path": path, "reason": "outside the project"})
        return resolved

    async def write_text_file(
        self, content: str, path: str, session_id: str, **kwargs: Any
    ) -> None:
        self.writes.append((path, content))
        self._inside(path).write_text(content)

    async def read_text_file(
        self, path: str, session_id: str, limit: int | None = None, line: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:  # fmt: skip
        lines = self._inside(path).read_text().splitlines(keepends=True)
        start = max((line or 1) - 1, 0)
        end = len(lines) if limit is None else start + limit
        return ReadTextFileResponse(content="".join(lines[start:end]))


class AgentProcess:
    """A third-party agent as a child process, connected with the SDK's client side and
    every message logged; closing ends it (killed if it hangs)."""

    def __init__(self, agent: ThirdPartyAgent) -> None:
        self.agent = agent
        self.client = FileClient(agent.cwd)
        self.wire = WireLog()
        self.stderr = ""
        self.process: asyncio.subprocess.Process
        self.connection: ClientSideConnection

    async def __aenter__(self) -> Self:
        self.process = await asyncio.create_subprocess_exec(
            *self.agent.argv,
            cwd=self.agent.cwd,
            env=self.agent.full_env(),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=16 * 1024 * 1024,
            start_new_session=True,
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.connection = connect_to_agent(
            self.client, self.process.stdin, self.process.stdout, observers=[self.wire]
        )
        self._stderr_task = asyncio.ensure_future(self._drain_stderr())
        return self

    async def _drain_stderr(self) -> None:
        """Keep the agent's stderr flowing (a full pipe would stall it); the tail is kept."""
        assert self.process.stderr is not None
        while chunk := await self.process.stderr.read(65536):
            self.stderr = (self.stderr + chunk.decode(errors="replace"))[-STDERR_TAIL:]

    async def initialize(self) -> Any:
        capabilities = ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=True, write_text_file=True)
        )
        return await asyncio.wait_for(
            self.connection.initialize(
                protocol_version=PROTOCOL_VERSION, client_capabilities=capabilities
            ),
            60,
        )

    async def __aexit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.connection.close(), 10)
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        # An npm launcher runs the real binary as its child, and neither need exit at the
        # end of input (codex-acp does not): the whole process group is ended.
        for ending in (None, signal.SIGTERM, signal.SIGKILL):
            if ending is not None:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(self.process.pid, ending)
            try:
                await asyncio.wait_for(self.process.wait(), 5)
                break
            except TimeoutError:
                continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._stderr_task, 5)
