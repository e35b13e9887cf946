"""An approval waits in the host with no window attached: `melgui --list-running` says
what waits and why, the host does not end while it waits, and the next window answers it.
What no window shows (an approval, an MCP server's form) is said on the desktop."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from melgui.host.client import HostClient
from melgui.host.main import describe_status
from melgui.tools.mcp.config import user_path
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess, host_on_bus
from tests.fakes.mcp import fake_entry
from tests.fakes.session_bus import NotificationBus
from tests.host.conftest import open_session, wait_for, write_b


async def test_an_approval_waits_with_no_window_and_is_listed(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([tool_calls(write_b())], [text("Written."), done()])
    window = await host.client("window")
    session = await open_session(window, str(tmp_path), scripted_relay.base_url)
    await window.attach({session: None})
    await window.call("turn/prompt", session=session, text="write b")
    await wait_for(window, session, lambda s: s["approvals"])
    await window.aclose()  # the window goes; the question stays in the host

    listed = subprocess.run(
        [sys.executable, "-m", "melgui", "--list-running"],
        env=host.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert listed.returncode == 0, listed.stderr
    assert "0 view(s)" in listed.stdout
    assert "1 waiting for approval" in listed.stdout
    assert "write_file: b.txt" in listed.stdout
    assert "melgui FOLDER" in listed.stdout

    again = await host.client("next window")
    try:
        snapshot = (await again.attach({session: None}))[session]["snapshot"]
        assert [a["id"] for a in snapshot["approvals"]] == ["w1"]
        answer = await again.call("approval/answer", session=session, call="w1", decision="approve")
        assert answer == {"answered": True}
        await wait_for(again, session, lambda s: not s["busy"] and not s["approvals"])
        assert (tmp_path / "b.txt").read_text() == "x"
    finally:
        await again.aclose()


def test_the_list_says_how_long_a_question_waits() -> None:
    question = {"id": "w1", "name": "run_command", "summary": "pytest -q",
                "reason": "runs a command", "source": "worker 2", "since": 1000.0}  # fmt: skip
    session = {"id": "s1", "folder": "/p", "busy": True, "approvals": [question]}
    said = describe_status({"version": "v", "pid": 7, "views": 0, "sessions": [session]},
                           now=1000.0 + 125)  # fmt: skip
    assert "[running, 1 waiting for approval]" in said
    assert "run_command: pytest -q  (waiting 2 min; runs a command)" in said


@pytest.mark.skipif(not NotificationBus.available(), reason="needs dbus-daemon")
async def test_a_question_no_window_shows_is_said_on_the_desktop(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([tool_calls(write_b())], [text("Written."), done()])
    with host_on_bus() as (host, bus):
        window = await host.client("window")
        session = await open_session(window, str(tmp_path), scripted_relay.base_url)
        await window.attach({session: None})
        await window.call("turn/prompt", session=session, text="write b")
        await wait_for(window, session, lambda s: s["approvals"])
        await asyncio.sleep(0.3)  # several frames: a window shows it, so none is sent
        assert bus.calls() == []
        await window.aclose()
        while not bus.calls():
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        [said] = bus.calls()
        assert "asks for approval" in said["summary"]
        assert "write_file: b.txt" in said["body"] and str(tmp_path) in said["body"]


async def _mcp_state(client: HostClient, folder: str, check: Any) -> dict[str, Any]:
    """The folder's MCP state, as `mcp/watch` answers it, once `check(state)` holds."""
    while True:
        state: dict[str, Any] = await client.call("mcp/watch", folder=folder)
        if check(state):
            return state
        await asyncio.sleep(0.05)


def _fake_ready(state: dict[str, Any]) -> bool:
    return [(row["name"], row["status"]) for row in state["servers"]] == [("fake", "ready")]


@pytest.mark.skipif(not NotificationBus.available(), reason="needs dbus-daemon")
async def test_an_mcp_servers_form_no_window_shows_is_said_on_the_desktop(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    """A form (elicitation) of the folder's MCP server in the host waits for a person as
    an approval does: with no view watching the folder, it is said once on the desktop."""
    book = tool_call("mcp__fake__book", {}, id="b1")
    scripted_relay.script([tool_calls(book)], [text("Booked."), done()])
    user_path().parent.mkdir(parents=True, exist_ok=True)
    entry = fake_entry(trusted=True, env={"MCP_FAKE_MARK": f"told-{tmp_path.name}"})
    user_path().write_text(json.dumps({"mcpServers": {"fake": entry}}))
    folder = str(tmp_path)
    with host_on_bus() as (host, bus):
        window = await host.client("window")
        session = await open_session(window, folder, scripted_relay.base_url)
        await window.attach({session: None})
        await _mcp_state(window, folder, _fake_ready)
        await window.call("turn/prompt", session=session, text="book a table")
        await wait_for(window, session, lambda s: s["approvals"])
        answer = {"session": session, "call": "b1", "decision": "approve"}
        assert await window.call("approval/answer", **answer) == {"answered": True}
        state = await _mcp_state(window, folder, lambda s: s["asks"])
        assert [a["kind"] for a in state["asks"]] == ["input"]
        await asyncio.sleep(0.3)  # several frames: a window shows it, so none is sent
        assert bus.calls() == []
        await window.aclose()  # the form stays in the host, shown by nobody
        while not bus.calls():
            await asyncio.sleep(0.05)
        await asyncio.sleep(0.3)
        [said] = bus.calls()
        assert "fake" in said["summary"] and "form" in said["summary"]
        assert "Book a table at Chez Nous" in said["body"] and folder in said["body"]
        user_path().unlink(missing_ok=True)
