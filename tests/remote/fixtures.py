"""A real sshd on 127.0.0.1 for a second local user, configured for the person's ssh as a
`Host` block (tests/remote/sshd.py), and what the remote user's Python needs to run
melgui's host (tests/remote/remote_python.py); with the setup the remote tests share:

- folders there (`remote.folder`, `git_folder_there`) and their URLs;
- `melgui exec --folder ssh://…` run to its end (`exec_there`) or started to be cut
  mid-call (`start_exec`, `kill_mid_call`), and what the model got back (`tool_results`);
- a link to a local command that behaves like a container's exec (`make_link`,
  `box_link`, `exec_in_box`: tests/remote/local_target.py) and one turn of a session whose
  tools run there (`turn_there`); waiting on a state (`until`, `wait_for`).

A plugin of the root conftest, not a conftest of its own: tests/remote and tests/ui/remote
share the one session's server (a second one would find the remote user still busy)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import Settings
from melgui.core.protocol.loop_events import LoopEvent, ToolCallFinished
from melgui.desk.desk import Desk
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.remote.link import Link
from melgui.remote.remote_tools import RemoteTools
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import ROOT, json_lines, melgui_exec
from tests.fakes.projects import git
from tests.remote.local_target import BRIDGE, box_host, box_target
from tests.remote.remote_python import REMOTE_PYTHON, remote_python_path
from tests.remote.sshd import TestSshServer

KEY = "k-remote"  # the model key `melgui exec` has here (never sent there)
FAKE_MCP = Path(__file__).resolve().parents[1] / "fakes" / "mcp_server.py"


@dataclass(frozen=True)
class Remote:
    """The ssh server and how the remote user runs melgui there."""

    server: TestSshServer
    python_path: str  # PYTHONPATH on the remote (the code copy and its dependencies)
    python: str = REMOTE_PYTHON

    @property
    def host_argv(self) -> list[str]:
        """The argv that starts melgui's host on the remote, env included."""
        return ["env", f"PYTHONPATH={self.python_path}", self.python, "-m", "melgui", "host"]

    def folder(self, name: str, files: dict[str, str] | None = None) -> Path:
        """A fresh folder in the remote user's home holding `files`, all owned by it."""
        place = self.server.home / name
        shutil.rmtree(place, ignore_errors=True)
        place.mkdir()
        for path, content in (files or {}).items():
            (place / path).write_text(content)
        self.server.give(place)
        return place

    def mcp_server_in(self, folder: Path, **more: object) -> dict[str, object]:
        """The test MCP server (tests/fakes/mcp_server.py) copied into `folder` there, and
        its `mcp.json` entry, run by the remote user's Python (`more`: e.g. trusted)."""
        server = folder / "fake_mcp.py"
        shutil.copy(FAKE_MCP, server)
        self.server.give(folder)
        env = {"PYTHONPATH": self.python_path}
        return {"command": self.python, "args": [str(server)], "env": env, **more}


def url(remote: Remote, folder: Path) -> str:
    """The folder's URL, as a person gives it (`ssh://HOST/abs/path`)."""
    return f"ssh://{remote.server.alias}{folder}"


def git_folder_there(remote: Remote, name: str, files: dict[str, str]) -> Path:
    """A fresh folder there holding `files`, a git repository with them committed."""
    folder = remote.folder(name, files)
    mine = ("-c", "safe.directory=*")  # made here as root, then given to the remote user
    git(folder, *mine, "init", "-q")
    git(folder, *mine, "add", "-A")
    git(folder, *mine, "commit", "-q", "-m", "start")
    remote.server.give(folder)
    return folder


# -- `melgui exec --folder ssh://…` ------------------------------------------------------


def exec_env(remote: Remote) -> dict[str, str]:
    """`melgui exec`'s environment: the key here, melgui's host there as the test runs it."""
    return {"MELIAI_API_KEY": KEY, HOST_COMMAND_ENV: shlex.join(remote.host_argv)}


def exec_there(
    relay_url: str, remote: Remote, folder: Path, prompt: str
) -> subprocess.CompletedProcess[str]:
    """`melgui exec --folder ssh://…/folder --approve all --json PROMPT`, to its end."""
    return melgui_exec(
        "--url", relay_url, "--folder", url(remote, folder), "--approve", "all", "--json",
        prompt, env=exec_env(remote),
    )  # fmt: skip


def start_exec(
    relay_url: str, remote: Remote, folder: Path, prompt: str, alias: str | None = None
) -> subprocess.Popen[str]:
    """The same, started (`alias`: another Host block for the server, e.g. through a
    proxy); its stdout and stderr are pipes."""
    environment = {**os.environ, "PYTHONPATH": str(ROOT), **exec_env(remote)}
    where = f"ssh://{alias or remote.server.alias}{folder}"
    return subprocess.Popen(
        [sys.executable, "-m", "melgui", "exec", "--url", relay_url, "--folder", where,
         "--approve", "all", "--json", prompt],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        env=environment, text=True,
    )  # fmt: skip


def kill_mid_call(
    process: subprocess.Popen[str],
    started: Path,
    victims: Callable[[], list[int]] | None = None,
    what: str = "the ssh client",
) -> tuple[str, str]:
    """Once `started` exists there (a call or hook runs), SIGKILL the one process
    `victims` finds (`what`; None: exec's ssh client); then exec's (stdout, stderr),
    once it ended by itself."""
    try:
        wait_for(started.exists, what=f"{started.name} there")
        found = wait_for(victims or (lambda: ssh_children(process.pid)), what=what)
        assert len(found) == 1, found
        os.kill(found[0], signal.SIGKILL)
        return process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()


def script_count(relay: ScriptedRelay, command: str) -> None:
    """The model runs `command` there (c1; it counts its runs in `counter`), then reads
    `counter` (c2)."""
    relay.script(
        [tool_calls(tool_call("run_command", {"command": command}, id="c1"))],
        [tool_calls(tool_call("read_file", {"path": "counter"}, id="c2"))],
        [text("Counted."), done()],
    )


def assert_one_run_one_result(relay: ScriptedRelay, folder: Path, stdout: str) -> None:
    """`script_count`'s command ran once there, and the model saw one result per call."""
    assert (folder / "started").read_text() == "s\n"
    assert (folder / "counter").read_text() == "x\n"  # it ran once
    results = [e for e in json_lines(stdout) if e["kind"] == "tool_result"]
    assert [(e["id"], e["status"]) for e in results] == [("c1", "ok"), ("c2", "ok")]
    assert "ran" in results[0]["content"]
    legs = relay.legs_received
    assert tool_results(legs[1]) == {"c1": 1}
    assert tool_results(legs[2]) == {"c1": 1, "c2": 1}
    counted = next(m for m in legs[2].messages if m.get("tool_call_id") == "c2")
    assert counted["content"].count("x") == 1


def tool_results(request: Any) -> dict[str, int]:
    """How many results the model got for each call id, in one request."""
    counts: dict[str, int] = {}
    for message in request.messages:
        if message.get("role") == "tool":
            counts[message["tool_call_id"]] = counts.get(message["tool_call_id"], 0) + 1
    return counts


def ssh_children(pid: int, name: str = "ssh") -> list[int]:
    """The processes named `name` whose parent is `pid`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        called = stat[stat.index("(") + 1 : stat.rindex(")")]
        parent = int(stat[stat.rindex(")") + 2 :].split()[1])
        if parent == pid and called == name:
            found.append(int(entry.name))
    return found


def session_sshd(listener: int) -> list[int]:
    """The connection's process ("sshd: USER@notty"), under its monitor ("[priv]")."""
    return [
        child
        for monitor in ssh_children(listener, "sshd")
        for child in ssh_children(monitor, "sshd")
    ]


# -- waiting on a state ----------------------------------------------------------------


def wait_for(check: Callable[[], Any], timeout: float = 60.0, what: str = "") -> Any:
    """`check()`'s first true value, polled (a test's thread waits on another process)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = check()
        if value:
            return value
        time.sleep(0.02)
    raise AssertionError(f"timed out waiting for {what}")


async def until(check: Callable[[], bool], what: str = "", timeout: float = 60.0) -> None:
    """Wait on the running loop until `check()` holds; AssertionError naming `what`."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not check():
        if loop.time() > deadline:
            raise AssertionError(f"timed out waiting for {what or check}")
        await asyncio.sleep(0.02)


# -- a link to a local command that behaves like `docker exec -i box` ------------------


def make_link(tmp_path: Path, folder: Path, give_up: float = 60.0) -> Link:
    """A link to the user's host in `tmp_path/run` (its data in `tmp_path/data`) on
    `folder`, quick to find a dead link and to reconnect."""
    target = box_target(tmp_path / "run", tmp_path / "data", folder)
    return Link(target, BRIDGE, heartbeat=0.2, dead_after=2.0, backoff=(0.1, 0.3), give_up=give_up)


def exec_in_box(
    relay_url: str, tmp_path: Path, folder: Path, *args: str
) -> subprocess.CompletedProcess[str]:
    """`melgui exec --via BOX --folder FOLDER ARGS…`, BOX being the local command that
    behaves like a container's exec (`box_host(tmp_path / "run")` around it ends its host),
    melgui's host in it this checkout's."""
    via = box_target(tmp_path / "run", tmp_path / "data", folder).label
    host = shlex.join([sys.executable, "-m", "melgui", "host"])
    return melgui_exec(
        "--url", relay_url, "--via", via, "--folder", str(folder), *args,
        env={"MELIAI_API_KEY": "k", HOST_COMMAND_ENV: host},
    )  # fmt: skip


async def signal_mid_call(
    link: Link, started: Path, call: Awaitable[dict[str, Any]], signum: int = signal.SIGKILL
) -> tuple[dict[str, Any], int]:
    """Run `call`; once `started` exists there, send the link's process `signum` (SIGKILL:
    the link dies; SIGSTOP: it goes silent). The call's outcome, and the pid signalled."""
    running = asyncio.ensure_future(call)
    await until(started.exists, f"{started.name} there")
    pid = link.pid
    assert pid is not None
    os.kill(pid, signum)
    return await asyncio.wait_for(running, 30), pid


@contextlib.asynccontextmanager
async def box_link(tmp_path: Path, folder: Path, give_up: float = 60.0) -> AsyncIterator[Link]:
    """`make_link`'s link, open, closed at the end with the host it started."""
    with box_host(tmp_path / "run"):
        link = make_link(tmp_path, folder, give_up)
        await link.open()
        try:
            yield link
        finally:
            await link.aclose()


async def turn_there(
    tmp_path: Path,
    box: Path,
    relay: ScriptedRelay,
    *,
    trusted: bool = True,
    rules: list[str] | None = None,
    modes: dict[str, Any] | None = None,
    link: Link | None = None,
    limit: float = 60.0,
) -> tuple[list[ToolCallFinished], Desk]:
    """One turn of a session whose tools run there (as `melgui exec` on a remote folder
    makes it: the desk's folder is a stand-in here, `tmp_path/here`); `link` (None:
    `make_link`'s) is opened and closed. `trusted`: the folder's language servers there
    check its edits. The calls that finished, and the desk."""
    here = tmp_path / "here"
    here.mkdir(exist_ok=True)
    settings = Settings(connection="relay", relay_url=relay.base_url)
    settings.approval_modes = {**settings.approval_modes, "run_command": "auto",
                               "write_file": "auto", **(modes or {})}  # fmt: skip
    settings.rules = rules or []
    desk = Desk(str(here), settings, api_key="k", plans=lambda t, m: None)
    finished: list[ToolCallFinished] = []
    link = link or make_link(tmp_path, box)
    await link.open()
    tools = RemoteTools(link, str(box), local=desk.tools, options={"diagnostics": trusted})
    session = desk.session(model="relay-model", role="assistant", tools=tools, cwd=str(box))

    def observe(event: LoopEvent) -> None:
        if isinstance(event, ToolCallFinished):
            finished.append(event)

    session.subscribe(observe)
    try:
        session.submit("go")
        await asyncio.wait_for(session.wait_idle(), limit)
    finally:
        await session.aclose()
        await desk.aclose()
        await link.aclose()
    return finished, desk


@pytest.fixture(scope="session")
def ssh_server() -> Iterator[TestSshServer]:
    if os.geteuid() != 0:
        pytest.skip("the sshd tests make a second local user, which needs root")
    workdir = Path(tempfile.mkdtemp(prefix="melgui-sshd-"))
    try:
        with TestSshServer.start(workdir) as server:
            yield server
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture(scope="session")
def remote(ssh_server: TestSshServer) -> Remote:
    paths = remote_python_path(ssh_server.workdir)
    return Remote(ssh_server, ":".join(paths))
