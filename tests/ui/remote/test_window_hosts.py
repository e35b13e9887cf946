"""Fan out from the real window: two configured hosts, one over the real sshd (a second
local user) and one through a local command that behaves like `docker exec -i box`, and
an orchestrator (the scripted relay) driving a worker on each. The loops run here; each
worker's tools run on its own machine; list_panes says where each runs."""

from __future__ import annotations

import asyncio
import shlex
import threading
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import RemoteHost
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote
from tests.remote.local_target import box_host

AUTO = {"write_file": "auto", "run_command": "auto"}


def worker_leg(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Wrote it."), done()]
    name = "a.txt" if "write a" in request.last_user_text else "b.txt"
    return [
        tool_calls(
            tool_call("write_file", {"path": name, "content": "made by a worker"}, id="w"),
            tool_call(
                "run_command", {"command": "id -un > who.txt; echo ${BOX:-none} > env.txt"}, id="r"
            ),
        )
    ]


def result_of(request: RecordedRequest, call_id: str) -> str:
    for message in request.messages:
        if message.get("role") == "tool" and message.get("tool_call_id") == call_id:
            return str(message.get("content"))
    raise AssertionError(f"no result for {call_id}")


@pytest.fixture
def box_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "box-project"
    folder.mkdir()
    return folder


def test_an_orchestrator_drives_a_worker_on_each_of_two_hosts(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    make_window: Any,
    qloop: asyncio.AbstractEventLoop,
    box_folder: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join(remote.host_argv))
    build_folder = remote.folder("fan-out")
    runtime = tmp_path / "run"
    box = f"env XDG_RUNTIME_DIR={runtime} MELGUI_DATA_DIR={tmp_path / 'box-data'}"
    hosts = [
        RemoteHost(name="build", target=f"ssh://{remote.server.alias}{build_folder}"),
        RemoteHost(name="box", target=box, folder=str(box_folder), env={"BOX": "1"}),
    ]
    workers_done = threading.Event()
    scripted_relay.on(lambda r: r.tool_role == "worker", worker_leg)
    scripted_relay.script(
        [
            tool_calls(
                tool_call("spawn_agent", {"layout": "right", "task": "@build write a"}, id="s1"),
                tool_call("spawn_agent", {"layout": "down", "task": "@box write b"}, id="s2"),
            )
        ],
        [
            hold(workers_done),
            tool_calls(
                tool_call("list_panes", {}, id="l1"),
                tool_call("read_agent", {"pane": 1}, id="a1"),
                tool_call("read_agent", {"pane": 2}, id="a2"),
            ),
        ],
        [text("Both are done."), done()],
    )
    settings = relay_settings(
        scripted_relay, role="orchestrator", hosts=hosts,
        approval_modes={"spawn_agent": "auto", "read_agent": "auto", "list_panes": "auto",
                        **AUTO},
    )  # fmt: skip
    with box_host(runtime):
        window: MainWindow = make_window(settings)
        manager = window.pane_manager

        def idle_worker(pane_id: int) -> bool:
            pane = manager.pane(pane_id)
            return isinstance(pane, AgentPane) and "Wrote it." in pane.latest_reply()

        async def scenario() -> None:
            window.bridge.submit("Put a worker on each machine.")
            await wait_until(lambda: idle_worker(1) and idle_worker(2), timeout=150)
            workers_done.set()
            await wait_until(
                lambda: not window.bridge.busy and window.session.loop.legs == 3, timeout=60
            )

        qloop.run_until_complete(asyncio.wait_for(scenario(), 240))
        # Closed here: closed after the block, its link to the ended box host reconnects
        # and starts a new one, left running as root after the run.
        qloop.run_until_complete(asyncio.wait_for(window.aclose(), 60))
    written = build_folder / "a.txt"
    assert written.read_text() == "made by a worker"
    assert written.stat().st_uid == remote.server.user.pw_uid  # written there, by its user
    assert (build_folder / "who.txt").read_text().strip() == remote.server.user.pw_name
    assert (box_folder / "b.txt").read_text() == "made by a worker"
    # Each host's own settings: its environment reached its commands, and only there.
    assert (box_folder / "env.txt").read_text() == "1\n"
    assert (build_folder / "env.txt").read_text() == "none\n"
    assert not (build_folder / "b.txt").exists() and not (box_folder / "a.txt").exists()
    last = scripted_relay.legs_received[-1]
    listed = result_of(last, "l1")
    rows = [line.split("\t") for line in listed.splitlines() if line[:1].isdigit()]
    assert [(row[0], row[1], row[-1]) for row in rows] == [
        ("1", "agent", "build"),
        ("2", "agent", "box"),
    ]
    assert "Hosts a worker can run on: build" in listed
    # Neither folder is a git repository: each worker shares it, and the model is told.
    assert f"No worktree of its own on build: {build_folder} is not in a git" in result_of(
        last, "s1"
    )
    assert "Wrote it." in result_of(last, "a1") and "Wrote it." in result_of(last, "a2")
    frame_titles = [info.title for info in manager.registry.all()]
    assert frame_titles[0].startswith("worker 1 @build") and "@box" in frame_titles[1]
