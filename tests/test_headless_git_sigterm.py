"""SIGTERM ends `melgui exec` at once while a git it started is stuck (git blocked on a
file, a slow disk): the git child is ended with it, not waited on until its timeout.
The stuck git is the checkpoint's, around an approved edit_file (the git exec runs)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.exec import ROOT
from tests.fakes.projects import make_project

BOUND_S = 60.0


def _stuck_git(bin_dir: Path, marker: Path) -> None:
    """A `git` first on PATH that notes its pid and arguments, then never ends."""
    bin_dir.mkdir()
    git = bin_dir / "git"
    git.write_text(f'#!/bin/sh\necho $$ "$@" >> "{marker}"\nexec sleep 300\n')
    git.chmod(0o755)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return state != "Z"


def test_sigterm_ends_exec_and_its_stuck_git_at_once(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    project = make_project(tmp_path, with_git=True)
    marker = tmp_path / "git-started"
    _stuck_git(tmp_path / "bin", marker)
    edit = {"path": "README.md", "old_string": "demo", "new_string": "edited"}
    scripted_relay.script([tool_calls(tool_call("edit_file", edit, id="c1"))], [text("ok"), done()])
    env = {
        **os.environ,
        "PYTHONPATH": str(ROOT),
        "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
        "MELIAI_API_KEY": "k",
    }
    command = [sys.executable, "-m", "melgui", "exec", "--url", scripted_relay.base_url]
    command += ["--folder", str(project), "--model", "m", "--approve", "all", "edit"]
    child = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
        env=env,
    )  # fmt: skip
    deadline = time.monotonic() + BOUND_S
    while not marker.exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert marker.exists(), "exec never started git"
    time.sleep(0.2)  # well inside the stuck git
    child.send_signal(signal.SIGTERM)
    try:
        _, stderr = child.communicate(timeout=15)
    except subprocess.TimeoutExpired:
        child.kill()
        _, stderr = child.communicate()
        raise AssertionError("exec waited on its stuck git after SIGTERM") from None
    assert child.returncode == 130, stderr
    gits = [int(line.split()[0]) for line in marker.read_text().splitlines()]
    time.sleep(0.5)
    assert not any(_alive(pid) for pid in gits), "a stuck git outlived exec"
