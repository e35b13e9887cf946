"""The desk with MCP servers: Stop mid-call, workers, the trusted read-only default."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent
from melgui.desk.desk import Desk
from tests.fakes import ScriptedRelay, done, tool_call, tool_calls
from tests.fakes.mcp import alive, fake_entry


def make_desk(folder: Path, relay: ScriptedRelay) -> Desk:
    settings = Settings(connection="relay", relay_url=relay.url, model="m")
    return Desk(str(folder), settings, api_key="k", plans=lambda title, markdown: None)


def servers(path: Path, **entries: object) -> Path:
    path.write_text(json.dumps({"mcpServers": entries}))
    return path


async def eventually(condition: object, seconds: float = 20) -> None:
    for _ in range(int(seconds / 0.02)):
        if callable(condition) and condition():
            return
        await asyncio.sleep(0.02)
    raise AssertionError("condition not met")


async def test_stop_mid_call_gives_a_cancelled_result_and_tells_the_server(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([tool_calls(tool_call("mcp__fake__hang", {}, id="h1"))])
    desk = make_desk(tmp_path, scripted_relay)
    await desk.start_mcp(extra=servers(tmp_path / "s.json", fake=fake_entry()), configured=False)
    session = desk.session(model="m", role="assistant")
    asked: list[ApprovalRequest] = []

    def approve(event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            asked.append(event.request)
            event.request.approve()

    session.subscribe(approve)
    server = desk.mcp.servers["fake"]
    try:
        session.submit("wait")
        await eventually(lambda: "hanging now" in server.stderr.text())
        session.stop()
        await session.wait_idle()
        assert [r.call.name for r in asked] == ["mcp__fake__hang"]  # MCP asks by default
        last = session.conversation.messages[-1]
        assert (last.role, last.tool_call_id, last.status) == ("tool", "h1", "cancelled")
        assert not session.conversation.pending_call_ids()
        await eventually(lambda: "notifications/cancelled" in server.log.text())
        assert server.state.status == "ready"
    finally:
        await session.aclose()
        assert server.process is not None
        pid = server.process.pid
        await desk.aclose()
    assert not alive(pid)


async def test_workers_get_mcp_tools_and_a_trusted_read_only_tool_runs_unasked(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.on(
        lambda request: request.tool_role == "worker",
        lambda request: [
            tool_calls(tool_call("mcp__mine__echo", {"text": "w"}, id="w1"))
            if not request.json["messages"][-1].get("tool_call_id")
            else done()
        ],
    )
    desk = make_desk(tmp_path, scripted_relay)
    config = servers(
        tmp_path / "s.json",
        mine=fake_entry(trusted=True),
        wild=fake_entry(roles=["assistant"]),
    )
    await desk.start_mcp(extra=config, configured=False)
    worker = desk.worker_session(model="m")
    asked: list[str] = []
    worker.subscribe(
        lambda e: asked.append(e.request.call.name) if isinstance(e, ApprovalNeeded) else None
    )
    try:
        worker.submit("echo")
        await worker.wait_idle()
        result = next(m for m in worker.conversation.messages if m.tool_call_id == "w1")
        assert (result.status, result.content) == ("ok", "w")
        assert asked == []  # trusted server, readOnlyHint: no question
        offered = [t.name for t in desk.catalog.for_role("worker")]
        assert "mcp__mine__echo" in offered and "mcp__wild__echo" not in offered
        assert desk.catalog.get("mcp__wild__echo").approval == "ask"  # type: ignore[union-attr]
    finally:
        await worker.aclose()
        await desk.aclose()


async def test_a_dead_servers_tool_says_the_server_stopped_not_unknown_tool(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        [tool_calls(tool_call("mcp__fake__crash", {}, id="c1"))],
        [tool_calls(tool_call("mcp__fake__echo", {"text": "x"}, id="e1"))],
        [done()],
    )
    desk = make_desk(tmp_path, scripted_relay)
    await desk.start_mcp(extra=servers(tmp_path / "s.json", fake=fake_entry()), configured=False)
    session = desk.session(model="m", role="assistant")
    session.subscribe(lambda e: e.request.approve() if isinstance(e, ApprovalNeeded) else None)
    try:
        session.submit("crash it, then echo")
        await session.wait_idle()
        echo = next(m for m in session.conversation.messages if m.tool_call_id == "e1")
        assert echo.status == "error"
        assert "Unknown tool" not in echo.content
        assert "The MCP server 'fake' is not running" in echo.content
        assert "exited (code 3)" in echo.content  # how it ended
        assert "about to crash: goodbye" in echo.content  # its last stderr line
    finally:
        await session.aclose()
        await desk.aclose()
