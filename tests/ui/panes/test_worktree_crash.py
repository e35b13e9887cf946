"""SIGKILL the real app while a worker in its own worktree is mid-turn, start it again on
the same project and data folder: the worktree is offered for review with its branch and
its work, and nothing is deleted (not the worktree, its branch, or the worker's edit)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.fakes import RecordedRequest, ScriptedRelay, hold, text, tool_call, tool_calls
from tests.fakes.projects import GIT_ENV, git, make_project, tree

REPO = Path(__file__).resolve().parents[3]
BRANCH = "melgui/1-change-the-app"

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(sys.platform == "win32", reason="SIGKILL and process groups"),
]


def _app(relay: ScriptedRelay, project: Path, home: Path, *args: str) -> subprocess.Popen[str]:
    env = {
        **os.environ,
        **GIT_ENV,
        "MELGUI_DATA_DIR": str(home / "data"),
        "MELGUI_CONFIG_DIR": str(home / "config"),
        "DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent",
        "PYTHONPATH": str(REPO),
    }
    command = [sys.executable, "-m", "tests.ui.panes.worktree_app"]
    return subprocess.Popen(
        [*command, "--url", relay.url, "--folder", str(project), *args],
        cwd=REPO,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _wait(condition: Callable[[], bool], app: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if app.poll() is not None:
            out, err = app.communicate()
            raise AssertionError(f"the app ended early ({app.returncode}): {out}{err}")
        assert time.monotonic() < deadline, "the app did not get there in time"
        time.sleep(0.05)


@pytest.fixture
def relay() -> Iterator[tuple[ScriptedRelay, threading.Event]]:
    gate = threading.Event()
    with ScriptedRelay() as server:
        try:
            yield server, gate
        finally:
            gate.set()


def test_a_worktree_left_by_a_killed_app_is_offered_at_the_next_start(
    relay: tuple[ScriptedRelay, threading.Event], tmp_path: Path
) -> None:
    server, gate = relay
    project = make_project(tmp_path, with_git=True)
    before = tree(project)

    def worker(request: RecordedRequest) -> list[Any]:
        if (request.last_message or {}).get("role") == "tool":
            return [text("Edited; thinking about the tests"), hold(gate, timeout=120)]
        edit = {"path": "src/app.py", "old_string": "hello", "new_string": "from the worker"}
        return [tool_calls(tool_call("edit_file", edit, id="e1"))]

    server.on(lambda r: r.tool_role == "worker", worker)
    first = _app(server, project, tmp_path, "start", "Change the app")

    def mid_turn() -> bool:  # its edit is made and its next leg streams, held
        return any((r.last_message or {}).get("role") == "tool" for r in server.legs_received)

    try:
        _wait(mid_turn, first)
    finally:
        os.killpg(first.pid, signal.SIGKILL)
        first.communicate(timeout=10)
    assert first.returncode == -signal.SIGKILL

    (listed,) = git(project, "worktree", "list").splitlines()[1:]  # the main one, then it
    worktree = Path(listed.split()[0])
    assert f"[{BRANCH}]" in listed
    assert (worktree / "src" / "app.py").read_text() == "print('from the worker')\n"

    second = _app(server, project, tmp_path, "recover")
    try:
        out, err = second.communicate(timeout=90)
    finally:
        if second.poll() is None:
            os.killpg(second.pid, signal.SIGKILL)
            second.communicate(timeout=10)
    assert second.returncode == 0, out + err
    rows = [line for line in out.splitlines() if line.startswith("row: ")]
    assert len(rows) == 1, out + err
    assert rows[0].startswith(f"row: {BRANCH} | ")
    assert "Change the app" in rows[0] and str(worktree) in rows[0]
    assert "1 uncommitted change (src/app.py)" in rows[0]
    # Kept: the worktree, its branch and the worker's edit; the main folder as it was.
    assert (worktree / "src" / "app.py").read_text() == "print('from the worker')\n"
    assert git(project, "branch", "--list", BRANCH).strip().endswith(BRANCH)
    assert tree(project) == before
