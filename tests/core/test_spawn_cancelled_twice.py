"""A child whose start a cancel cut short is killed and reaped by a task of its own;
cancelled twice, the caller stops waiting for it. `settle_ending` then lets that task
finish before the loop closes. The app's quit once left it pending ("Task was destroyed
but it is pending!" on stderr, CI, a SIGTERM while a command started)."""

from __future__ import annotations

import asyncio
import os
from typing import Any

import pytest

from melgui.core.runtime.processes import settle_ending, spawn
from tests.fakes.late_watcher import REASON, SUPPORTED, late_watcher, started_pids

pytestmark = pytest.mark.skipif(not SUPPORTED, reason=REASON)


def _ending() -> list[asyncio.Task[Any]]:
    return [
        t for t in asyncio.all_tasks() if getattr(t.get_coro(), "__name__", "") == "_end_started"
    ]


def test_a_child_cancelled_twice_as_it_starts_is_reaped_before_the_loop_closes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    may_wait = late_watcher(monkeypatch)  # its end is reported late, as on a busy machine
    started = started_pids(monkeypatch)

    async def scenario() -> None:
        task = asyncio.ensure_future(spawn("sleep", "30", start_new_session=True))
        while not started:  # forked: from here the child exists
            await asyncio.sleep(0)
        task.cancel()
        await asyncio.sleep(0)
        task.cancel()  # the quit cancels again: the caller no longer waits for the child
        with pytest.raises(asyncio.CancelledError):
            await task
        assert _ending(), "the child is being ended by a task of its own"
        asyncio.get_running_loop().call_later(0.2, may_wait.set)
        await settle_ending(timeout=10)
        assert not _ending()
        with pytest.raises(ChildProcessError):  # reaped by the watcher, not left behind
            os.waitpid(started[0], os.WNOHANG)

    asyncio.run(scenario())
