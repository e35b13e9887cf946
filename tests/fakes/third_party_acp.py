"""A real third-party ACP agent for tests: OpenCode (npm `opencode-ai`), offline.

`.ci/run` installs it with `npm ci --prefix .ci/node` (versions pinned by
.ci/node/package-lock.json). `opencode_agent()` writes its configuration into a temporary
HOME (XDG folders included) with one custom OpenAI-compatible provider whose base URL is
a started `ScriptedOpenAI`, turns off its update check, model-catalog fetch, LSP
downloads, sharing and default plugins, and returns the argv, environment and folder to
start `opencode acp` with:

    agent = opencode_agent(server, tmp_path)
    answer_titles(server)                     # OpenCode asks the model for a session title
    async with AgentProcess(agent) as running:
        await running.initialize()
        session = await running.connection.new_session(cwd=str(agent.cwd), mcp_servers=[])

Absent binary: the test is skipped, except in CI (`CI=true`), where it fails.
"""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any, Self

import pytest
from acp import PROTOCOL_VERSION, RequestError, connect_to_agent
from acp.client.connection import ClientSideConnection
from acp.connection import StreamDirection, StreamEvent
from acp.schema import ClientCapabilities, FileSystemCapabilities, ReadTextFileResponse

from tests.fakes.acp_client import RecordingClient
from tests.fakes.scenario import done, text
from tests.fakes.scripted_server import RecordedRequest, ScriptedOpenAI

ROOT = Path(__file__).resolve().parents[2]
NODE_PREFIX = ROOT / ".ci" / "node"
OPENCODE = NODE_PREFIX / "node_modules" / ".bin" / "opencode"
PROVIDER = "scripted"
API_KEY = "sk-scripted"
# Everything OpenCode would otherwise reach for on the network, or read from the machine.
OFFLINE_ENV = {
    "OPENCODE_DISABLE_AUTOUPDATE": "1",
    "OPENCODE_DISABLE_MODELS_FETCH": "1",
    "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
    "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
    "OPENCODE_DISABLE_SHARE": "1",
    "OPENCODE_DISABLE_PROJECT_CONFIG": "1",
    "OPENCODE_DISABLE_CLAUDE_CODE": "1",
    "OPENCODE_DISABLE_EXTERNAL_SKILLS": "1",
    # Any npm fetch it still tried would fail at once instead of reaching a registry.
    "npm_config_offline": "true",
}
PLUGIN_SDK = "@opencode-ai/plugin"


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
        inherited = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(("OPENCODE_", "OPENAI_", "ANTHROPIC_", "XDG_"))
        }
        return {**inherited, **self.env}


def opencode_version() -> str:
    """The version .ci/node/package.json pins."""
    manifest = json.loads((NODE_PREFIX / "package.json").read_text())
    return str(manifest["dependencies"]["opencode-ai"])


def require_opencode() -> Path:
    """The installed `opencode` launcher; skips the test when it is absent (fails in CI)."""
    if OPENCODE.exists():
        return OPENCODE
    reason = f"opencode-ai is not installed: run `npm ci --prefix {NODE_PREFIX.relative_to(ROOT)}`"
    if os.environ.get("CI") == "true":
        pytest.fail(f"{reason} (.ci/run must install it)")
    pytest.skip(reason)


def opencode_agent(
    server: ScriptedOpenAI,
    root: Path,
    model: str = "gpt-test",
    permission: dict[str, Any] | None = None,
) -> ThirdPartyAgent:
    """`opencode acp` configured for `server` only, in a git project under `root`.

    The project is a git repository because OpenCode takes the repository's top as its
    worktree (outside one it takes `/`, and names files relative to that)."""
    binary = require_opencode()
    home, project = root / "opencode-home", root / "project"
    config_dir = home / ".config" / "opencode"
    for folder in (config_dir, project):
        folder.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    config = {
        "autoupdate": False,
        "share": "disabled",
        "model": f"{PROVIDER}/{model}",
        "small_model": f"{PROVIDER}/{model}",
        "enabled_providers": [PROVIDER],
        "provider": {
            PROVIDER: {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Scripted",
                "options": {"baseURL": server.base_url, "apiKey": API_KEY},
                "models": {model: {"name": f"Scripted {model}", "tool_call": True}},
            }
        },
        # Edits and commands ask the client, so the permission path is exercised.
        "permission": permission or {"edit": "ask", "bash": "ask", "webfetch": "deny"},
    }
    (config_dir / "opencode.json").write_text(json.dumps(config, indent=2))
    settle_plugin_dependencies(config_dir)
    env = {
        "HOME": str(home),
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
        "XDG_STATE_HOME": str(home / ".local" / "state"),
        **OFFLINE_ENV,
    }
    return ThirdPartyAgent("opencode", (str(binary), "acp"), env, project, home)


def settle_plugin_dependencies(config_dir: Path) -> None:
    """Mark the config folder's plugin SDK as installed: at start OpenCode otherwise runs
    an npm install of `@opencode-ai/plugin` there, from the registry. It skips that when
    node_modules exists and package-lock.json already lists every dependency."""
    (config_dir / "node_modules").mkdir(exist_ok=True)
    lock = {"lockfileVersion": 3, "packages": {"": {"dependencies": {PLUGIN_SDK: "*"}}}}
    (config_dir / "package-lock.json").write_text(json.dumps(lock))


def opencode_warnings(agent: ThirdPartyAgent) -> list[str]:
    """The WARN and ERROR lines of OpenCode's own log in the agent's HOME; a network fetch it
    tried (npm_config_offline makes one fail at once) shows up here."""
    logs = sorted((agent.home / ".local" / "share" / "opencode" / "log").glob("*.log"))
    lines = (line for log in logs for line in log.read_text(errors="replace").splitlines())
    return [line for line in lines if "level=WARN" in line or "level=ERROR" in line]


def is_title_request(request: RecordedRequest) -> bool:
    """OpenCode's side request for a session title (sent alongside the first turn)."""
    first = request.messages[0] if request.messages else {}
    return "title generator" in str(first.get("content", ""))


def answer_titles(server: ScriptedOpenAI, title: str = "Scripted session") -> None:
    """Answer every title request, whenever it comes, outside the scripted legs."""
    server.on(is_title_request, [text(title), done()])


def turn_requests(server: ScriptedOpenAI) -> list[RecordedRequest]:
    """The model requests of the agent's turns (title requests left out)."""
    return [r for r in server.legs_received if not is_title_request(r)]


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
        )
        assert self.process.stdin is not None and self.process.stdout is not None
        self.connection = connect_to_agent(
            self.client, self.process.stdin, self.process.stdout, observers=[self.wire]
        )
        return self

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
        await self.connection.close()
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        try:
            await asyncio.wait_for(self.process.wait(), 15)
        except TimeoutError:
            self.process.kill()
            await self.process.wait()
