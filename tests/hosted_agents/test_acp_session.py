"""HostedAgentSession, the surface the window's views drive (queue, stop, observers), and what a
session/new hands the agent (the project's MCP servers), against the scripted agent."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from melgui.core.protocol.views.agent_commands import agent_name, known_agent, parse_command
from melgui.desk.hosted_agents.host import AcpHost
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.tools.mcp.config import ServerConfig
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 30


async def test_messages_queue_behind_a_turn_and_stop_hands_back_the_rest(tmp_path: Path) -> None:
    session = HostedAgentSession(AcpHost(scripted_agent(), str(tmp_path)))
    events = Events()
    session.subscribe(events)
    try:
        session.submit(json.dumps([{"say": "one"}]))
        session.submit(json.dumps([{"say": "two"}]))
        assert session.busy and len(session.queued) == 2
        await asyncio.wait_for(session.wait_idle(), LIMIT)
        assert [m.content for m in session.conversation.messages if m.role == "assistant"] == [
            "one", "two",
        ]  # fmt: skip
        session.submit(json.dumps([{"say": "working"}, {"hang": 1}]))
        session.submit("never sent")
        await asyncio.wait_for(_until(lambda: "working" in events.text()), LIMIT)
        assert session.stop() == ["never sent"]
        await asyncio.wait_for(session.wait_idle(), LIMIT)
        assert session.last_stop == "cancelled" and events.kinds()[-1] == "turn_cancelled"
        assert session.loop.model == "m-small"  # the agent's model option, once started
    finally:
        await session.aclose()
    assert session.host.process is not None and session.host.process.returncode is not None


async def test_a_start_is_shared_by_the_pane_and_the_first_message(tmp_path: Path) -> None:
    session = HostedAgentSession(AcpHost(scripted_agent(), str(tmp_path)))
    try:
        starting = asyncio.ensure_future(session.start())
        session.submit(json.dumps([{"say": "hi"}]))
        await asyncio.wait_for(starting, LIMIT)
        await asyncio.wait_for(session.wait_idle(), LIMIT)
        assert session.conversation.messages[-1].content == "hi"
        process = session.host.process
        await asyncio.wait_for(session.start(), LIMIT)
        assert session.host.process is process  # one agent process, not two
    finally:
        await session.aclose()


SERVERS = [
    ServerConfig("files", "stdio", command="mcp-files", args=("--root", "."), env={"A": "1"}),
    ServerConfig("web", "http", url="http://127.0.0.1:9/mcp", headers={"X": "y"}),
    ServerConfig("off", "stdio", command="x", disabled=True),
]


async def sent_servers(folder: Path, *flags: str) -> tuple[list[dict[str, Any]], Events]:
    """What session/new carried to the scripted agent, as it read it off the wire."""
    record = folder / "session-new.jsonl"
    record.unlink(missing_ok=True)
    host = AcpHost(
        scripted_agent("--record", str(record), *flags), str(folder), mcp_servers=SERVERS
    )
    events = Events()
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
    finally:
        await host.aclose()
    lines = [json.loads(line) for line in record.read_text().splitlines()]
    (new,) = [line["params"] for line in lines if line["method"] == "session/new"]
    return new["mcpServers"], events


async def test_session_new_gets_the_projects_mcp_servers_the_agent_can_use(
    tmp_path: Path,
) -> None:
    stdio = {
        "name": "files", "command": "mcp-files", "args": ["--root", "."],
        "env": [{"name": "A", "value": "1"}],
    }  # fmt: skip
    http = {
        "type": "http", "name": "web", "url": "http://127.0.0.1:9/mcp",
        "headers": [{"name": "X", "value": "y"}],
    }  # fmt: skip
    sent, events = await sent_servers(tmp_path, "--mcp-http")
    assert sent == [stdio, http]
    assert events.of("context_notice") == []
    # an agent without mcpCapabilities.http gets the stdio server only, and the pane says so
    sent, events = await sent_servers(tmp_path)
    assert sent == [stdio]
    assert [e.text for e in events.of("context_notice")] == [
        "MCP servers not given to the agent: web (HTTP, which this agent cannot use)."
    ]


def test_known_agent_commands_and_names() -> None:
    assert known_agent("opencode acp") is not None
    assert known_agent("opencode") is None  # the TUI stays a terminal
    assert known_agent("ls -la") is None and known_agent("'unclosed") is None
    codex = known_agent("npx @zed-industries/codex-acp --yes")
    assert codex is not None and codex.name == "codex" and codex.origin == "acp:codex"
    mine = known_agent("/opt/my-agent --stdio", ("my-agent --stdio",))
    assert mine is not None and mine.name == "my-agent"
    assert agent_name(["npx", "-y", "@acme/agent-acp"]) == "agent-acp"
    assert parse_command("goose acp").argv == ("goose", "acp")


def test_agents_started_by_a_runner_are_named_by_what_they_run() -> None:
    names = {
        "python a.py": "a",
        "python3.11 /w/bots/b.py --fast": "b",
        "python -m tools.helper acp": "tools.helper",
        "node c.js": "c",
        "node /x/node_modules/opencode-ai/bin/opencode acp": "opencode",
        "uvx x-agent": "x-agent",
        "uvx --from mistral-vibe vibe-acp": "vibe-acp",
        "uv run agents/dist/index.js": "agents",
        "npx -y @acme/agent-acp@1.2.0": "agent-acp",
        "pnpm dlx foo-acp": "foo-acp",
        "/opt/my-agent --stdio": "my-agent",
    }
    assert {text: parse_command(text).name for text in names} == names
    # distinct agents started by one interpreter get distinct rules
    assert len({parse_command(t).origin for t in ("python a.py", "python b.py")}) == 2


def test_the_persons_label_names_their_agent() -> None:
    own = ("helper: python tools/agent.py --acp",)
    found = known_agent("python tools/agent.py --acp", own)
    assert found is not None and found.origin == "acp:helper"
    assert parse_command(own[0]).name == "helper"
    assert parse_command(own[0]).argv == ("python", "tools/agent.py", "--acp")
    assert known_agent("python other.py", own) is None


async def _until(condition: object) -> None:
    while not condition():  # type: ignore[operator]
        await asyncio.sleep(0.01)
