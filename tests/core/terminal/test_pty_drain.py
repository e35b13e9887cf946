"""The drain that drains a pty into a pipe: used by default, complete, and never the
reason a terminal's program outlives melgui or loses output when the drain dies."""

from __future__ import annotations

import fcntl
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from melgui.core.runtime.processes import signal_state
from melgui.core.terminal.pty_drain import PIPE_SIZE
from melgui.core.terminal.pty_session import PtySession, process_alive


def _read_until_eof(pty: PtySession, timeout: float = 10.0) -> bytes:
    out = b""
    deadline = time.monotonic() + timeout
    while not pty.eof and time.monotonic() < deadline:
        chunk = pty.read()
        out += chunk
        if not chunk:
            time.sleep(0.005)
    assert pty.eof, f"no end of output; read so far: {out[-200:]!r}"
    return out


def _cmdline(pid: int) -> list[bytes]:
    # Popen returns once the drain's exec has begun; the kernel sets the new program's
    # arguments a moment later, and until then /proc shows none.
    deadline = time.monotonic() + 10
    while not (words := Path(f"/proc/{pid}/cmdline").read_bytes()):
        assert time.monotonic() < deadline, "the drain never showed its command line"
        time.sleep(0.005)
    return words.split(b"\0")


def test_output_comes_through_the_drain_whole_and_in_order(tmp_path: Path) -> None:
    # 3 MB, more than the drain's pipe and far more than the pty holds.
    lines = 60_000
    pty = PtySession(["sh", "-c", f"read x; seq {lines}"], cwd=tmp_path)
    try:
        drain_pid = pty.drain_pid
        assert drain_pid is not None and pty.read_fd != pty.fd
        relay = _cmdline(drain_pid)
        assert relay[:4] == [sys.executable.encode(), b"-I", b"-S", b"-c"]
        pty.write(b"\r")
        out = _read_until_eof(pty)
    finally:
        pty.finish()
    expected = ("\r\n" + "".join(f"{n}\r\n" for n in range(1, lines + 1))).encode()
    assert out == expected
    assert pty.exit_code == 0
    assert not process_alive(drain_pid)  # it ended with the output


def test_the_drain_starts_with_default_signals_whatever_melgui_inherited(
    hostile_parent: None, tmp_path: Path
) -> None:
    pty = PtySession(["sleep", "5"], cwd=tmp_path)
    try:
        assert pty.drain_pid is not None
        _cmdline(pty.drain_pid)  # it runs Python now, not melgui's copy before exec
        state = signal_state(pty.drain_pid)
    finally:
        pty.finish()
    assert state["SigBlk"] == 0
    assert state["SigIgn"] & ~(1 << (signal.SIGPIPE - 1)) == 0  # Python ignores SIGPIPE itself


def test_the_drains_pipe_is_made_large(tmp_path: Path) -> None:
    pty = PtySession(["sleep", "5"], cwd=tmp_path)
    try:
        assert pty.read_fd is not None
        assert fcntl.fcntl(pty.read_fd, fcntl.F_GETPIPE_SZ) == PIPE_SIZE
    finally:
        pty.finish()


def test_a_drain_that_dies_early_leaves_the_master_to_be_read(tmp_path: Path) -> None:
    pty = PtySession(["bash", "--norc", "-c", "echo before; read x; echo after-$x"], cwd=tmp_path)
    try:
        out = b""
        deadline = time.monotonic() + 10
        while b"before" not in out and time.monotonic() < deadline:
            out += pty.read()
            time.sleep(0.005)
        assert pty.drain_pid is not None
        os.kill(pty.drain_pid, signal.SIGKILL)
        deadline = time.monotonic() + 10
        while pty.read_fd != pty.fd and time.monotonic() < deadline:
            out += pty.read()  # the pipe's end: the drain was killed, not the output done
            time.sleep(0.005)
        assert pty.read_fd == pty.fd and not pty.eof
        pty.write(b"ok\r")
        out += _read_until_eof(pty)
    finally:
        pty.finish()
    assert out.endswith(b"after-ok\r\n")
    assert pty.exit_code == 0


_ORPHAN = """
import json, os, sys
from melgui.core.terminal.pty_session import PtySession
pty = PtySession(["sleep", "300"], cwd=sys.argv[1])
print(json.dumps({"program": pty.pid, "relay": pty.drain_pid}), flush=True)
os._exit(0)  # melgui gone without closing anything: a crash, or a SIGKILL
"""


def test_a_program_does_not_outlive_melgui_because_of_its_drain(tmp_path: Path) -> None:
    # Before the drain, melgui's end closed the master and the kernel hung the terminal
    # up. The drain holds the master too: it must notice melgui has gone and let go.
    done = subprocess.run(
        [sys.executable, "-c", _ORPHAN, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    pids = json.loads(done.stdout)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and (
        process_alive(pids["relay"]) or process_alive(pids["program"])
    ):
        time.sleep(0.05)
    assert not process_alive(pids["relay"]), "the drain outlived melgui"
    assert not process_alive(pids["program"]), "the terminal's program outlived melgui"


def test_without_a_drain_the_master_is_read(tmp_path: Path) -> None:
    pty = PtySession(["echo", "plain"], cwd=tmp_path, drain=False)
    try:
        assert pty.drain_pid is None and pty.read_fd == pty.fd
        assert _read_until_eof(pty) == b"plain\r\n"
    finally:
        pty.finish()
