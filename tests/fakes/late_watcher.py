"""asyncio's child watcher made late, as on a loaded machine, to test that melgui leaves
the reaping of its asyncio children to it.

Python 3.11's ThreadedChildWatcher waits for each child in a thread of its own. Under a
CPU hog that thread may run well after the child ended; anything that reaps the child
first (`process.kill()` and `transport.close()` poll) makes asyncio log "Unknown child
process pid N, will report returncode 255" and report 255. `late_watcher` holds every
watcher thread back until the returned event is set.
"""

from __future__ import annotations

import asyncio
import asyncio.base_subprocess
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

# /proc, and the watcher this holds back (Python 3.12 prefers pidfds).
SUPPORTED = sys.platform.startswith("linux") and sys.version_info < (3, 12)
REASON = "/proc, and asyncio's ThreadedChildWatcher (Python 3.11's default)"


def late_watcher(monkeypatch: pytest.MonkeyPatch) -> threading.Event:
    """Hold asyncio's watcher threads back (at most 10 s) until the event is set."""
    watcher = asyncio.unix_events.ThreadedChildWatcher
    waits = getattr(watcher, "_do_waitpid")  # noqa: B009 (private, and untyped)
    may_wait = threading.Event()

    def late(self: Any, loop: Any, pid: int, callback: Any, args: Any) -> None:
        may_wait.wait(10)  # a thread not scheduled yet
        waits(self, loop, pid, callback, args)

    monkeypatch.setattr(watcher, "_do_waitpid", late)
    return may_wait


def zombie(pid: int) -> bool:
    """Whether `pid` has ended and nothing has waited for it yet."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def until_zombie(pid: int, timeout: float = 10.0) -> None:
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    while not zombie(pid):
        assert loop.time() < deadline, f"pid {pid} did not end"
        await asyncio.sleep(0.01)


def unknown_children(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if "Unknown child process" in r.getMessage()]


def pipes_connected_late(monkeypatch: pytest.MonkeyPatch) -> None:
    """asyncio connects a new child's pipes only once the child has ended: a cancel of the
    spawn then lands in asyncio's own clean-up (transport.close(), which polls)."""
    base = asyncio.base_subprocess.BaseSubprocessTransport
    connect = getattr(base, "_connect_pipes")  # noqa: B009 (private, and untyped)

    async def late(self: Any, waiter: Any) -> None:
        await until_zombie(self.get_pid())
        await connect(self, waiter)

    monkeypatch.setattr(base, "_connect_pipes", late)


def started_pids(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The pids of asyncio's children, each appended as soon as it is forked (before
    asyncio connects its pipes or a caller sees it)."""
    started: list[int] = []
    transport = getattr(asyncio.unix_events, "_UnixSubprocessTransport")  # noqa: B009
    real = transport._start

    def start(self: Any, *args: Any, **kwargs: Any) -> None:
        real(self, *args, **kwargs)
        started.append(self._proc.pid)

    monkeypatch.setattr(transport, "_start", start)
    return started
