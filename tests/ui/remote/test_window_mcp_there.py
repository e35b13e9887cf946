"""MCP servers on other machines in the real window. A configured host names a server of
the person's MCP configuration: it starts in melgui's host there (a local command that
behaves like `docker exec -i box`), and a worker on that host is offered its tools and
calls it there, while the same server of this machine serves the window's own chat. A
remote folder's window (over the real sshd) starts the person's servers there, as the
remote user, and none here."""

from __future__ import annotations

import asyncio
import json
import os
import shlex
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import RemoteHost
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.tools.mcp.config import user_path
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.mcp import fake_entry
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote
from tests.remote.local_target import box_host, host_pid

WHERE = "mcp__tools__whereami"


def worker_leg(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Looked there."), done()]
    return [tool_calls(tool_call(WHERE, {}, id="w"))]


def result_of(request: RecordedRequest, call_id: str) -> str:
    for message in request.messages:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return str(message.get("content"))
    raise AssertionError(f"no result for {call_id}")


def _box_with(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, name: str, entry: dict[str, Any]
) -> tuple[Path, list[RemoteHost]]:
    """The person's mcp.json holds one server, `name`; a host "box" (a local command
    standing in for a container, with its own runtime and data folders) starts it there.
    Returns the box's runtime folder (for `box_host`) and the settings' hosts."""
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join([sys.executable, "-m", "melgui", "host"]))
    box_folder = tmp_path / "box-project"
    box_folder.mkdir()
    runtime = tmp_path / "run"
    user_path().parent.mkdir(parents=True, exist_ok=True)
    user_path().write_text(json.dumps({"mcpServers": {name: entry}}), encoding="utf-8")
    box = f"env XDG_RUNTIME_DIR={runtime} MELGUI_DATA_DIR={tmp_path / 'box-data'}"
    return runtime, [RemoteHost(name="box", target=box, folder=str(box_folder), mcp_servers=[name])]


def test_a_worker_on_a_host_calls_the_mcp_server_that_runs_there(
    scripted_relay: ScriptedRelay,
    make_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime, hosts = _box_with(tmp_path, monkeypatch, "tools", fake_entry(trusted=True))
    worker_done = threading.Event()
    scripted_relay.on(lambda r: r.tool_role == "worker", worker_leg)
    scripted_relay.script(
        [tool_calls(tool_call(WHERE, {}, id="here"),
                    tool_call("spawn_agent", {"layout": "right", "task": "@box look"}, id="s1"))],
        [hold(worker_done), text("Both looked."), done()],
    )  # fmt: skip
    settings = relay_settings(
        scripted_relay, role="orchestrator", hosts=hosts, approval_modes={"spawn_agent": "auto"}
    )
    with box_host(runtime):
        window: MainWindow = make_window(settings)

        def worker_said() -> bool:
            pane = window.pane_manager.pane(1)
            return isinstance(pane, AgentPane) and "Looked there." in pane.latest_reply()

        async def scenario() -> None:
            await wait_until(lambda: bool(window.desk.mcp.bridge.offered), timeout=60)
            window.bridge.submit("Look here and there.")
            await wait_until(worker_said, timeout=150)
            worker_done.set()
            await wait_until(
                lambda: not window.bridge.busy and window.session.loop.legs == 2, timeout=60
            )

        qloop.run_until_complete(asyncio.wait_for(scenario(), 240))
        pid = host_pid(runtime)
    worker_legs = [r for r in scripted_relay.legs_received if r.tool_role == "worker"]
    assert WHERE in worker_legs[0].tool_names
    there = result_of(worker_legs[-1], "w")
    # The worker's call ran in the box's host: the server there is that host's child.
    assert there.startswith(f"ppid={pid} ") and f"cwd={hosts[0].folder} " in there
    chat_legs = [r for r in scripted_relay.legs_received if r.tool_role == "orchestrator"]
    here = result_of(chat_legs[-1], "here")
    assert here.startswith(f"ppid={os.getpid()} ")  # the chat's own, on this machine


def test_a_remote_folders_window_runs_the_persons_servers_there_not_here(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
) -> None:
    folder = remote.folder("window-mcp")
    entry = remote.mcp_server_in(folder, trusted=True)
    user_path().parent.mkdir(parents=True, exist_ok=True)
    user_path().write_text(json.dumps({"mcpServers": {"there": entry}}), encoding="utf-8")
    scripted_relay.script(
        [tool_calls(tool_call("mcp__there__whereami", {}, id="m1"))], [text("Seen."), done()]
    )
    url = f"ssh://{remote.server.alias}{folder}"
    window = remote_window(url, relay_settings(scripted_relay))

    async def scenario() -> None:
        assert window.remote.folder is not None
        await window.remote.folder  # connected, and its servers started there
        window.bridge.submit("Where does it run?")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2, 120)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    first, second = scripted_relay.legs_received
    assert "mcp__there__whereami" in first.tool_names
    seen = result_of(second, "m1")
    assert f" user={remote.server.user.pw_name} cwd={folder} " in seen
    assert window.desk.mcp.servers == {}  # none of them started on this machine


def test_a_server_that_cannot_start_on_a_host_is_said_under_the_chat(
    scripted_relay: ScriptedRelay,
    make_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime, hosts = _box_with(tmp_path, monkeypatch, "db", {"command": "no-such-db-server"})
    with box_host(runtime):
        window: MainWindow = make_window(relay_settings(scripted_relay, hosts=hosts))
        place = qloop.run_until_complete(asyncio.wait_for(window.remote.place("box"), 60))
        window.resize(1100, 500)
        window.grab().save(str(tmp_path / "note.png"))
    assert place.mcp.added() == ()
    said = "MCP server db on box: failed: command not found: no-such-db-server"
    note = window.chat.note_label
    assert note.isVisible() and note.text() == said
    # The MCP panel lists it beside this machine's own (the same entry, for the window's
    # chat), each labelled with where it runs.
    rows = [(item.text(0), item.text(1)) for item in window.mcp_panel.server_items()]
    failed = "failed: command not found: no-such-db-server"
    assert rows == [("db · on this machine", failed), ("db · on box", failed)]


def test_a_remote_folders_own_mcp_file_asks_trust_then_starts_there_and_the_panel_says_where(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder = remote.folder("window-mcp-project")
    entry = remote.mcp_server_in(folder)
    (folder / ".melgui").mkdir()
    own = {"mcpServers": {"own": entry}}
    (folder / ".melgui" / "mcp.json").write_text(json.dumps(own), encoding="utf-8")
    remote.server.give(folder)
    user_path().parent.mkdir(parents=True, exist_ok=True)
    user_path().write_text(json.dumps({"mcpServers": {"mine": entry}}), encoding="utf-8")
    url = f"ssh://{remote.server.alias}{folder}"
    window = remote_window(url, relay_settings(scripted_relay))
    panel, there = window.mcp_panel, window.desk.mcp_there

    def rows() -> list[tuple[str, str]]:
        return [(item.text(0), item.text(1)) for item in panel.server_items()]

    async def scenario() -> None:
        assert window.remote.folder is not None
        place = await window.remote.folder
        await wait_until(lambda: bool(there.untrusted) and bool(there.servers), 60)
        assert panel.trust_button.isVisibleTo(panel)
        assert "own" not in {s.name for s in there.every()}  # waits for trust
        assert window.grab().save(str(tmp_path / "mcp-waits-there.png"))
        panel.trust_button.click()
        await wait_until(lambda: "own" in {s.name for s in there.every()}, 90)
        await wait_until(lambda: place.mcp.get("mcp__own__whereami") is not None, 30)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    window.side_panel.reveal("mcp")
    assert window.grab().save(str(tmp_path / "mcp-there.png"))
    label = window.remote.hosts.names()[-1]
    states = dict(rows())
    assert states[f"mine · on {label}"].startswith("ready, ")
    assert states[f"own · on {label}"].startswith("ready, ")
    assert not panel.trust_button.isVisibleTo(panel)
    said = window.chat.transcript.toPlainText()
    assert f"MCP servers from {url}/.melgui/mcp.json are waiting for trust" in said
    # Remembered here, by the folder's URL: a second window on it starts them unasked.
    again = remote_window(url, relay_settings(scripted_relay))

    async def second() -> None:
        assert again.remote.folder is not None
        place = await again.remote.folder
        assert place.options["project_mcp"]
        await wait_until(lambda: "own" in {s.name for s in again.desk.mcp_there.every()}, 90)

    qloop.run_until_complete(asyncio.wait_for(second(), 180))
    assert again.desk.mcp_there.untrusted == {}
    assert window.desk.mcp.servers == {}  # none of them on this machine
