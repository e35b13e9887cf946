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


@contextlib.contextmanager
def box_host(runtime: Path) -> Iterator[None]:
    """Ends the user's host the bridge started in `runtime` when the test ends."""
    runtime.mkdir(mode=0o700, exist_ok=True)
    try:
        yield
    finally:
        pid = host_pid(runtime)
        if pid is not None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
