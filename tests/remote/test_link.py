"""The link and the host's single tool calls, through a local command that behaves like a
container's exec (tests/remote/local_target.py): results, idempotent runs by call id,
and a call that goes on while the link process is killed, whose result arrives once."""

from __future__ import annotations

import asyncio
import os
import signal
import time
from pathlib import Path
from typing import Any

import pytest

from melgui.remote.link import Link
from tests.fakes.host_process import HostProcess, runtime_dir
from tests.remote.fixtures import box_link, make_link, signal_mid_call
from tests.remote.local_target import BRIDGE, box_host, box_target, host_pid


@pytest.fixture
def box(tmp_path: Path) -> Path:
    folder = tmp_path / "project"
    folder.mkdir()
    (folder / "a.txt").write_text("hello from the box\n")
    return folder


async def test_a_call_runs_there_and_its_result_comes_back(tmp_path: Path, box: Path) -> None:
    async with box_link(tmp_path, box) as link:
        outcome = await link.run_call("v/1", str(box), "read_file", {"path": "a.txt"})
    assert outcome["status"] == "ok"
    assert "hello from the box" in outcome["content"]


async def test_a_call_id_runs_once_however_often_it_is_sent(tmp_path: Path, box: Path) -> None:
    command = {"command": "echo x >> counter"}
    async with box_link(tmp_path, box) as link:
        first = await link.run_call("v/1", str(box), "run_command", command)
        again = await link.run_call("v/1", str(box), "run_command", command)
    assert first["status"] == "ok"
    assert again["status"] == "error"  # its result was delivered: it does not run again
    assert (box / "counter").read_text() == "x\n"


async def test_the_host_never_runs_a_call_id_twice(tmp_path: Path, box: Path) -> None:
    """Sent again while it runs, after it ended, and after it was acknowledged."""
    with runtime_dir() as runtime:
        host = HostProcess(runtime).start()
        try:
            client = await host.client()
            heard: list[dict[str, Any]] = []
            client.on_notification = lambda method, params: heard.append(params["result"])
            run = {"call_id": "v/1", "folder": str(box), "name": "run_command",
                   "arguments": {"command": "sleep 0.5; echo x >> counter"}}  # fmt: skip
            states = [(await client.call("tools/run", **run))["state"]]
            states.append((await client.call("tools/run", **run))["state"])
            while not heard:
                await asyncio.sleep(0.02)
            states.append((await client.call("tools/run", **run))["state"])
            replay = await client.call("tools/attach", since=0)
            await client.call("tools/ack", calls=["v/1"])
            states.append((await client.call("tools/run", **run))["state"])
            after = await client.call("tools/attach", since=0)
            await client.aclose()
        finally:
            host.stop()
    assert states == ["started", "running", "done", "acknowledged"]
    assert [r["call_id"] for r in replay["results"]] == ["v/1"]
    assert replay["results"][0]["seq"] == heard[0]["seq"] == 1
    assert after["results"] == [] and after["running"] == []
    assert (box / "counter").read_text() == "x\n"


async def test_a_killed_link_reconnects_and_the_running_call_ends_once(
    tmp_path: Path, box: Path
) -> None:
    command = {"command": "echo s >> started; sleep 1.5; echo x >> counter; echo done"}
    states: list[str] = []
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, box)
        await link.open()
        link.on_state = states.append
        try:
            call = link.run_call("v/1", str(box), "run_command", command)
            outcome, first_pid = await signal_mid_call(link, box / "started", call)
            second = await link.run_call("v/2", str(box), "read_file", {"path": "counter"})
            now_pid = link.pid
        finally:
            await link.aclose()
    assert outcome["status"] == "ok", outcome
    assert "done" in outcome["content"]
    assert link.reconnects >= 1 and now_pid not in (None, first_pid)
    assert any(state.startswith("reconnecting") for state in states)
    assert (box / "counter").read_text() == "x\n"
    assert (box / "started").read_text() == "s\n"
    assert "x" in second["content"]


async def test_a_host_that_cannot_be_reached_again_gives_each_open_call_one_result(
    tmp_path: Path, box: Path
) -> None:
    command = {"command": "sleep 30"}
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, box, give_up=1.0)
        await link.open()
        try:
            running = asyncio.create_task(link.run_call("v/1", str(box), "run_command", command))
            await asyncio.sleep(0.5)
            link.target = box_target(tmp_path / "run", tmp_path / "data", box)
            link.host_argv = ["false"]  # every reconnect fails from now on
            pid = link.pid
            assert pid is not None
            os.kill(pid, signal.SIGKILL)
            outcome = await asyncio.wait_for(running, 30)
        finally:
            await link.aclose()
    assert outcome["status"] == "error"
    assert outcome["content"] == (
        f"the connection to {link.target.label} was lost while run_command ran; "
        "it may have finished there"
    )


async def test_a_result_that_ends_while_the_link_is_down_is_replayed_once(
    tmp_path: Path, box: Path
) -> None:
    """The call ends during the outage (the first reconnect fails, the next waits 1 s):
    the result is kept there and comes with the reattach, once."""
    command = {"command": "echo s >> started; sleep 0.3; echo x >> counter"}
    with box_host(tmp_path / "run"):
        target = box_target(tmp_path / "run", tmp_path / "data", box)
        link = Link(target, BRIDGE, heartbeat=0.2, dead_after=2.0, backoff=(1.0,))
        await link.open()
        try:
            running = asyncio.create_task(link.run_call("v/1", str(box), "run_command", command))
            while not (box / "started").exists():
                await asyncio.sleep(0.02)
            pid = link.pid
            assert pid is not None
            link.host_argv = ["false"]
            os.kill(pid, signal.SIGKILL)
            await asyncio.sleep(0.6)
            assert (box / "counter").exists() and not running.done()  # ended there, unheard
            link.host_argv = BRIDGE
            outcome = await asyncio.wait_for(running, 30)
        finally:
            await link.aclose()
    assert outcome["status"] == "ok", outcome
    assert link.reconnects >= 1
    assert (box / "counter").read_text() == "x\n"


async def test_a_killed_remote_host_gives_the_running_call_one_result_and_no_second_run(
    tmp_path: Path, box: Path
) -> None:
    command = {"command": "echo s >> started; sleep 1; echo x >> counter"}
    runtime = tmp_path / "run"
    with box_host(runtime):
        link = make_link(tmp_path, box)
        await link.open()
        try:
            running = asyncio.create_task(link.run_call("v/1", str(box), "run_command", command))
            while not (box / "started").exists():
                await asyncio.sleep(0.02)
            first_host = host_pid(runtime)
            assert first_host is not None
            os.kill(first_host, signal.SIGKILL)
            outcome = await asyncio.wait_for(running, 30)
            after = await link.run_call("v/2", str(box), "read_file", {"path": "started"})
        finally:
            await link.aclose()
    assert outcome["status"] == "error"
    assert outcome["content"] == (
        f"the melgui host on {link.target.label} stopped while run_command ran; "
        "it may have finished there"
    )
    assert host_pid(runtime) != first_host  # the next connection started a new host
    assert after["status"] == "ok"
    assert (box / "started").read_text() == "s\n"  # not run again on the new host


async def test_a_link_that_goes_silent_is_found_dead_by_its_heartbeat(
    tmp_path: Path, box: Path
) -> None:
    """The link process stopped (SIGSTOP: its pipes stay open, nothing closes, as in a
    black-holed network): unanswered pings end it, and the link reconnects."""
    command = {"command": "echo s >> started; sleep 1; echo x >> counter"}
    async with box_link(tmp_path, box) as link:
        call = link.run_call("v/1", str(box), "run_command", command)
        outcome, stopped = await signal_mid_call(link, box / "started", call, signal.SIGSTOP)
        now_pid = link.pid
    assert outcome["status"] == "ok", outcome
    assert link.reconnects >= 1 and now_pid not in (None, stopped)
    assert (box / "counter").read_text() == "x\n"


async def test_a_stall_of_the_view_longer_than_dead_after_keeps_a_live_link(
    tmp_path: Path, box: Path
) -> None:
    """This process stalls (a busy window, a loaded laptop) while a ping is out: its
    answer is there when the loop runs again, and the link is not declared dead (one
    ping's deadline did, and a second connection was made)."""
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, box)
        await link.open()
        states: list[str] = []
        link.on_state = states.append
        try:
            pid = link.pid
            assert pid is not None
            os.kill(pid, signal.SIGSTOP)  # a ping goes out and waits
            await asyncio.sleep(0.5)
            os.kill(pid, signal.SIGCONT)
            time.sleep(link.dead_after + 1.0)  # the stall itself: the loop runs nothing
            await asyncio.sleep(1.0)  # a few heartbeats, answered
            after = await asyncio.wait_for(link.run_call("v/1", str(box), "read_file",
                                                         {"path": "a.txt"}), 30)  # fmt: skip
        finally:
            await link.aclose()
    assert states == [] and link.reconnects == 0 and link.pid is None
    assert after["status"] == "ok"
