"""The path of tests/ui/test_quit_while_a_tool_runs.py: a command cancelled as the app
quits is ended through its process group (os.killpg, which reaps nothing) and awaited
through asyncio's child watcher, however late the watcher's thread runs; asyncio logs no
"Unknown child process" and the shell's status is its death by SIGTERM."""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from typing import Any

import pytest

from melgui.tools.commands import run_command
from tests.fakes.late_watcher import REASON, SUPPORTED, late_watcher, unknown_children, until_zombie

pytestmark = pytest.mark.skipif(not SUPPORTED, reason=REASON)


def test_a_cancelled_command_is_reaped_once_by_the_watcher(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch, tmp_path: Any
) -> None:
    may_wait = late_watcher(monkeypatch)
    started: list[asyncio.subprocess.Process] = []
    real = run_command.start_group

    async def spawn(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await real(*args, **kwargs)
        started.append(process)
        return process

    monkeypatch.setattr(run_command, "start_group", spawn)

    async def scenario() -> None:
        env = {"PATH": os.environ["PATH"], "SHELL": "/bin/sh"}
        task = asyncio.ensure_future(
            run_command.execute("sleep 30", str(tmp_path), timeout=60, cap=10_000, env=env)
        )
        while not started:
            await asyncio.sleep(0.01)
        await asyncio.sleep(0.1)  # the command waits now
        task.cancel()  # the app quitting cancels its tasks
        await until_zombie(started[0].pid)  # SIGTERM to the group; nothing has reaped it
        await asyncio.sleep(0.1)
        may_wait.set()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert started[0].returncode == -signal.SIGTERM

    with caplog.at_level(logging.WARNING, logger="asyncio"):
        asyncio.run(scenario())
    assert not unknown_children(caplog)
