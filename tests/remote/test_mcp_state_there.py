"""The MCP panel's model of the servers on a host (desk/mcp/servers_there.py) stays current,
through a local command that behaves like a container's exec (tests/remote/local_target.py):
a server there that dies after it started is shown failed and its tools are no longer
offered (the host tells `mcp/changed`); Restart starts it again there and it is shown
ready, its tools offered again; after a reconnect its state is asked again."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
from pathlib import Path

import pytest

from melgui.core.config.settings import RemoteHost
from melgui.core.protocol.views.servers_there import ServersThere, ServerThere
from melgui.remote.hosts import RemoteHosts
from melgui.tools.mcp.config import user_path
from tests.fakes.mcp import fake_entry
from tests.remote.fixtures import until
from tests.remote.local_target import box_host, host_pid

LIMIT = 60


def child_of(parent: int | None, word: str) -> int:
    """The pid of `parent`'s child whose command line has `word`."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
            line = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode()
        except OSError:
            continue
        if int(stat.rsplit(")", 1)[1].split()[1]) == parent and word in line:
            return int(entry.name)
    raise AssertionError(f"no child of {parent} runs {word}")


@pytest.fixture
def hosts(tmp_path: Path) -> RemoteHosts:
    folder = tmp_path / "box-project"
    folder.mkdir()
    runtime = tmp_path / "run"
    user_path().parent.mkdir(parents=True, exist_ok=True)
    user_path().write_text(json.dumps({"mcpServers": {"db": fake_entry()}}), encoding="utf-8")
    box = f"env XDG_RUNTIME_DIR={runtime} MELGUI_DATA_DIR={tmp_path / 'box-data'}"
    host = RemoteHost(name="box", target=box, folder=str(folder), mcp_servers=["db"])
    made = RemoteHosts([host], host_argv=[sys.executable, "-m", "melgui", "host", "--bridge"])
    return made


def state_of(there: ServersThere) -> ServerThere:
    (server,) = there.servers["box"]
    return server


async def test_a_server_that_dies_there_is_shown_failed_and_restart_brings_it_back(
    tmp_path: Path, hosts: RemoteHosts
) -> None:
    there = ServersThere()
    hosts.show_in(there)
    with box_host(tmp_path / "run"):
        (tmp_path / "run").mkdir(exist_ok=True)
        try:
            place = await asyncio.wait_for(hosts.place("box"), LIMIT)
            assert state_of(there).status == "ready"
            assert place.mcp.get("mcp__db__echo") is not None
            # the server dies later (its own crash tool, called as a worker would)
            crashed = await place.link.run_call(
                "v/1", place.folder, "mcp__db__crash", {}, place.options
            )
            assert crashed["status"] == "error"
            await until(lambda: state_of(there).status == "failed", "the server shown failed")
            assert "exited" in state_of(there).line
            assert place.mcp.get("mcp__db__echo") is None  # no longer offered
            there.restart("box", "db")  # the panel's Restart
            await until(lambda: state_of(there).status == "ready", "the server shown ready")
            assert place.mcp.get("mcp__db__echo") is not None
            echo = await place.link.run_call(
                "v/2", place.folder, "mcp__db__echo", {"text": "back"}, place.options
            )
            assert echo["status"] == "ok" and "back" in echo["content"]
            # killed there while the link is down: its state is asked again on reconnect
            server_pid = child_of(host_pid(tmp_path / "run"), "mcp_server")
            link_pid = place.link.pid
            assert link_pid is not None
            os.kill(link_pid, signal.SIGKILL)
            os.kill(server_pid, signal.SIGKILL)
            await until(lambda: place.link.reconnects >= 1, "the reconnect")
            await until(lambda: state_of(there).status == "failed", "the server shown failed")
            assert place.mcp.get("mcp__db__echo") is None
        finally:
            await hosts.aclose()
