"""How a pane's program starts: through `setsid -c` with vfork when nothing needs
resetting, else from a fork of melgui; either way a session leader whose controlling
terminal is its pty, in that terminal's foreground group."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

# Run in a process of its own: its signals, its PATH (where setsid is looked for) and
# its at-fork count are the test's. `before` runs in melgui when subprocess forks the
# interpreter for a preexec_fn, never for a vfork.
_OPEN = """
import json, os, signal, sys, time
from melgui.core.runtime.processes import reset_signals
reset_signals()  # as a clean launcher leaves it, whatever started the tests
if sys.argv[2] == "hostile":
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # a background job of a shell
forks = []
os.register_at_fork(before=lambda: forks.append(1))
from melgui.core.terminal.pty_session import PtySession
pty = PtySession(["sleep", "30"], cwd=sys.argv[1], env={"PATH": os.environ["PATH"]},
                 columns=97, rows=31, drain=False)
forked = len(forks)
deadline = time.monotonic() + 10
while open(f"/proc/{pty.pid}/comm").read().strip() != "sleep":  # exec'd the program
    assert time.monotonic() < deadline, "the program did not start"
    time.sleep(0.005)
stat = open(f"/proc/{pty.pid}/stat").read()
fields = stat[stat.rfind(")") + 2:].split()
status = dict(line.split(":\\t", 1) for line in open(f"/proc/{pty.pid}/status").read().splitlines())
stdin = os.readlink(f"/proc/{pty.pid}/fd/0")
size = os.popen(f"stty -F {stdin} size").read().split()
print(json.dumps({
    "forked": forked, "pid": pty.pid, "pgrp": int(fields[2]), "session": int(fields[3]),
    "tty": int(fields[4]), "foreground": int(fields[5]), "stdin": stdin,
    "stdin_device": os.stat(stdin).st_rdev, "ignored": int(status["SigIgn"], 16),
    "cwd": os.readlink(f"/proc/{pty.pid}/cwd"), "size": size,
}))
pty.close(grace=0.5)
"""


def _open(tmp_path: Path, path: str, how: str = "clean") -> dict[str, Any]:
    """What the pane's program was like, opened by a melgui whose PATH is `path`."""
    folder = tmp_path / "project"
    folder.mkdir()
    env = {**os.environ, "PATH": path}
    done = subprocess.run(
        [sys.executable, "-c", _OPEN, str(folder), how],
        capture_output=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    seen: dict[str, Any] = json.loads(done.stdout)
    assert Path(seen["cwd"]).resolve() == folder.resolve()
    return seen


def _bin(tmp_path: Path, setsid: str | None) -> str:
    """A PATH with the test's programs, and `setsid` as given (None: no setsid at all)."""
    folder = tmp_path / "bin"
    folder.mkdir()
    for name in ("sleep", "stty"):
        found = shutil.which(name)
        assert found is not None
        (folder / name).symlink_to(found)
    if setsid is not None:
        (folder / "setsid").write_text(setsid)
        (folder / "setsid").chmod(0o755)
    return str(folder)


def _assert_a_terminal_of_its_own(seen: dict[str, Any]) -> None:
    pid = seen["pid"]
    assert seen["session"] == pid and seen["pgrp"] == pid  # its own session and group
    assert seen["stdin"].startswith("/dev/pts/")
    assert seen["tty"] == seen["stdin_device"]  # its controlling terminal is its pty
    assert seen["foreground"] == pid  # and its group is that terminal's foreground
    assert seen["ignored"] == 0  # Ctrl-C and the rest reach it
    assert seen["size"] == ["31", "97"]


@pytest.mark.skipif(sys.platform != "linux", reason="setsid -c is util-linux's")
def test_a_pane_opens_without_forking_melgui(tmp_path: Path) -> None:
    # A preexec_fn forks the whole interpreter (milliseconds on the window's thread,
    # more the larger the window's process is); setsid -c takes the terminal instead.
    real = shutil.which("setsid")
    if real is None or b"-c" not in subprocess.run([real, "--help"], capture_output=True).stdout:
        pytest.skip("no setsid that takes the terminal here")
    seen = _open(tmp_path, os.environ["PATH"])
    assert seen["forked"] == 0
    _assert_a_terminal_of_its_own(seen)


def test_signals_to_reset_take_the_fork(tmp_path: Path) -> None:
    seen = _open(tmp_path, os.environ["PATH"], "hostile")
    assert seen["forked"] == 1  # only a fork resets what melgui ignores (SIGINT here)
    _assert_a_terminal_of_its_own(seen)


def test_without_setsid_the_fork_takes_the_terminal(tmp_path: Path) -> None:
    seen = _open(tmp_path, _bin(tmp_path, None))
    assert seen["forked"] == 1
    _assert_a_terminal_of_its_own(seen)


def test_a_setsid_that_cannot_take_the_terminal_is_not_used(tmp_path: Path) -> None:
    # util-linux before 2.24 has no -c; a program started through it would have no
    # controlling terminal (this one would not start it at all).
    old = "#!/bin/sh\necho 'Usage: setsid program [arg...]' >&2\nexit 1\n"
    seen = _open(tmp_path, _bin(tmp_path, old))
    assert seen["forked"] == 1
    _assert_a_terminal_of_its_own(seen)


_CLOSE_AT_ONCE = """
import json, os, sys
from melgui.core.runtime.processes import reset_signals
reset_signals()
from melgui.core.terminal.pty_session import PtySession, process_alive
pty = PtySession(["sleep", "300"], cwd=sys.argv[1], env={"PATH": os.environ["PATH"]},
                 drain=False)
pty.close(grace=0.3)  # before setsid has made the session
print(json.dumps({"pid": pty.pid, "alive": process_alive(pty.pid), "code": pty.exit_code}))
"""


@pytest.mark.skipif(sys.platform != "linux", reason="setsid -c is util-linux's")
def test_a_pane_closed_before_its_session_exists_leaves_nothing(tmp_path: Path) -> None:
    # Between setsid's exec and its setsid() the program is in no session of its own:
    # neither the session's members nor its group reach it, only its pid does. A setsid
    # slow to get there (a second here) makes that moment long enough to close in.
    real = shutil.which("setsid")
    if real is None or b"-c" not in subprocess.run([real, "--help"], capture_output=True).stdout:
        pytest.skip("no setsid that takes the terminal here")
    slow = (
        f"#!{sys.executable}\nimport os, sys, time\n"
        f"if sys.argv[1:] != ['--help']:\n    time.sleep(1)\n"
        f"os.execv({real!r}, [{real!r}, *sys.argv[1:]])\n"
    )
    folder = tmp_path / "project"
    folder.mkdir()
    env = {**os.environ, "PATH": _bin(tmp_path, slow)}
    done = subprocess.run(
        [sys.executable, "-c", _CLOSE_AT_ONCE, str(folder)],
        capture_output=True, env=env, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    seen = json.loads(done.stdout)
    if seen["alive"]:  # the program close() left running (the pty's hang-up may end it)
        with contextlib.suppress(ProcessLookupError):
            os.kill(seen["pid"], signal.SIGKILL)
    assert not seen["alive"]
    assert seen["code"] == -signal.SIGHUP
