"""kill_unreaped and release_pipes leave the reaping of an asyncio child to the loop's
child watcher, however late its thread runs: a child that has just ended keeps its own
exit status, and asyncio logs no "Unknown child process"."""

from __future__ import annotations

import asyncio
import logging
import signal
from collections.abc import Coroutine
from typing import Any

import pytest

from melgui.core.runtime.processes import kill_unreaped, release_pipes, still_running
from tests.fakes.late_watcher import REASON, SUPPORTED, late_watcher, unknown_children, until_zombie

pytestmark = pytest.mark.skipif(not SUPPORTED, reason=REASON)


def _run(scenario: Coroutine[Any, Any, None], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="asyncio"):
        asyncio.run(scenario)
    assert not unknown_children(caplog)


def test_a_child_that_just_ended_is_left_to_the_watcher(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    may_wait = late_watcher(monkeypatch)

    async def scenario() -> None:
        process = await asyncio.create_subprocess_exec("sh", "-c", "exit 3")
        await until_zombie(process.pid)
        assert not still_running(process.pid)
        kill_unreaped(process)  # process.kill() here reaps it: the watcher then says 255
        may_wait.set()
        assert await process.wait() == 3

    _run(scenario(), caplog)


def test_a_child_that_runs_gets_the_signal(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    may_wait = late_watcher(monkeypatch)

    async def scenario() -> None:
        process = await asyncio.create_subprocess_exec("sleep", "30")
        assert still_running(process.pid)
        kill_unreaped(process, signal.SIGTERM)
        await until_zombie(process.pid)
        kill_unreaped(process)  # ended: nothing sent, nothing reaped
        may_wait.set()
        assert await process.wait() == -signal.SIGTERM
        assert not still_running(process.pid)  # reaped by the watcher: no child of ours
        kill_unreaped(process)  # reported ended: nothing to do

    _run(scenario(), caplog)


def test_released_pipes_leave_the_child_to_the_watcher(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    may_wait = late_watcher(monkeypatch)

    async def scenario() -> None:
        process = await asyncio.create_subprocess_exec(
            "sh", "-c", "exit 4", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE
        )
        await until_zombie(process.pid)
        release_pipes(process)  # transport.close() here polls, and reaps it
        assert process.stdin is not None and process.stdin.is_closing()
        may_wait.set()
        assert await process.wait() == 4

    _run(scenario(), caplog)
