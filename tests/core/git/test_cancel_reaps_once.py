"""A git run cancelled after git has exited but before asyncio's child watcher thread has
waited for it (on a busy machine that thread may not have run yet) must not reap the
process behind the watcher's back: the watcher then finds no child and logs "Unknown
child process pid N, will report returncode 255" on stderr. Seen once in a window test
under a CPU hog: the app, sent SIGINT during a command, said so as it quit."""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from pathlib import Path
from typing import Any

import pytest

from melgui.core.git import runner
from tests.fakes.late_watcher import (
    late_watcher,
    pipes_connected_late,
    started_pids,
    unknown_children,
    until_zombie,
)

pytestmark = pytest.mark.skipif(
    not sys.platform.startswith("linux") or sys.version_info >= (3, 12),
    reason="/proc, and asyncio's ThreadedChildWatcher (Python 3.11's default)",
)


def _zombie(pid: int) -> bool:
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] == "Z"


async def _cancelled_after_exit(
    watcher_may_wait: threading.Event, started: list[asyncio.subprocess.Process]
) -> None:
    task = asyncio.ensure_future(runner._run_async(["true"], "/", {}, None, 30))
    while not started:
        await asyncio.sleep(0)
    while not _zombie(started[0].pid):  # `true` has ended; nothing has waited for it
        await asyncio.sleep(0.01)
    asyncio.get_running_loop().call_later(0.2, watcher_may_wait.set)  # the thread runs now
    task.cancel()  # the app quitting cancels its tasks
    with pytest.raises(asyncio.CancelledError):
        await task
    assert started[0].returncode == 0  # as git left it, reported by the watcher


def test_a_cancelled_git_leaves_the_reaping_to_the_child_watcher(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    watcher = asyncio.unix_events.ThreadedChildWatcher
    waits = getattr(watcher, "_do_waitpid")  # noqa: B009 (private, and untyped)
    may_wait = threading.Event()
    started: list[asyncio.subprocess.Process] = []
    real = asyncio.create_subprocess_exec

    async def spawn(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await real(*args, **kwargs)
        started.append(process)
        return process

    def late(self: Any, loop: Any, pid: int, callback: Any, args: Any) -> None:
        may_wait.wait(10)  # a thread not scheduled yet, as on a loaded machine
        waits(self, loop, pid, callback, args)

    monkeypatch.setattr(watcher, "_do_waitpid", late)
    monkeypatch.setattr(runner.asyncio, "create_subprocess_exec", spawn)
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        asyncio.run(_cancelled_after_exit(may_wait, started))
    assert not [r for r in caplog.records if "Unknown child process" in r.getMessage()]


def test_a_git_cancelled_while_it_is_started_is_reaped_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Cancelled inside asyncio.create_subprocess_exec (its pipes not yet connected) after
    a quick git has ended: asyncio's own clean-up would poll, and reap it."""
    may_wait = late_watcher(monkeypatch)
    pipes_connected_late(monkeypatch)
    started = started_pids(monkeypatch)

    async def scenario() -> None:
        task = asyncio.ensure_future(runner._run_async(["true"], "/", {}, None, 30))
        while not started:
            await asyncio.sleep(0)
        await until_zombie(started[0])
        asyncio.get_running_loop().call_later(0.2, may_wait.set)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        await asyncio.sleep(0.5)  # the watcher's report

    with caplog.at_level(logging.WARNING, logger="asyncio"):
        asyncio.run(scenario())
    assert not unknown_children(caplog)
