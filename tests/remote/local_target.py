"""A local command that behaves like a container's exec (`docker exec -i box ARGV`): it
runs the argv given to it with its stdio, here as this user in a runtime directory of
the test's own, so the user's host it reaches is the test's."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

from melgui.remote.target import CommandTarget, command_target

ROOT = Path(__file__).resolve().parents[2]
BRIDGE = [sys.executable, "-m", "melgui", "host", "--bridge"]


def box_target(runtime: Path, data: Path, folder: Path) -> CommandTarget:
    env = f"env XDG_RUNTIME_DIR={runtime} PYTHONPATH={ROOT} MELGUI_DATA_DIR={data}"
    return command_target(env, str(folder))


def host_pid(runtime: Path) -> int | None:
    info = runtime / "melgui" / "host.json"
    with contextlib.suppress(OSError, ValueError, KeyError):
        return int(json.loads(info.read_text())["pid"])
    return None


_ENDED: dict[Path, int | None] = {}  # runtimes `box_host` left this test, and the host it ended


@contextlib.contextmanager
def box_host(runtime: Path) -> Iterator[None]:
    """Ends the user's host the bridge started in `runtime` when the block ends. A window
    still open then starts a new one when it closes (its link reconnects to close what
    it has there): close it inside the block. `hosts_started_late` ends and names those."""
    runtime.mkdir(mode=0o700, exist_ok=True)
    try:
        yield
    finally:
        pid = host_pid(runtime)
        _ENDED[runtime] = pid
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)


def _is_host(pid: int) -> bool:
    try:
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")
    except OSError:
        return False
    return b"melgui" in argv and b"host" in argv


def hosts_started_late() -> list[int]:
    """The hosts running in a runtime whose `box_host` block had ended (each is ended
    here); forgets those runtimes. The autouse `no_box_host_left` fails a test by them."""
    late: list[int] = []
    for runtime, ended in _ENDED.items():
        pid = host_pid(runtime)
        if pid is not None and pid != ended and _is_host(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
                late.append(pid)
    _ENDED.clear()
    return late
