"""A command of the remote install that outlives its timeout is killed only if it still
runs: one that has ended but whose end asyncio's child watcher has not heard yet (its
thread late, on a busy machine) is not reaped behind the watcher's back by
process.kill()'s poll, so asyncio logs no "Unknown child process". No sshd needed."""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import pytest

from melgui.remote import install
from tests.fakes.late_watcher import REASON, SUPPORTED, late_watcher, unknown_children

pytestmark = pytest.mark.skipif(not SUPPORTED, reason=REASON)


def test_a_timed_out_install_step_leaves_the_reaping_to_the_watcher(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    may_wait = late_watcher(monkeypatch)
    started: list[asyncio.subprocess.Process] = []
    real = asyncio.create_subprocess_exec

    async def spawn(*args: Any, **kwargs: Any) -> asyncio.subprocess.Process:
        process = await real(*args, **kwargs)
        started.append(process)
        return process

    monkeypatch.setattr(install.asyncio, "create_subprocess_exec", spawn)

    async def scenario() -> None:
        # `sh` ends at once; the watcher is held back, so the wait times out after it.
        asyncio.get_running_loop().call_later(2.5, may_wait.set)
        with pytest.raises(install.InstallError, match="did not answer"):
            await install._run(["sh", "-c", "exit 6"], b"", 2.0, "the host")
        assert started[0].returncode == 6  # its own status: it had ended, nothing killed it

    with caplog.at_level(logging.WARNING, logger="asyncio"):
        asyncio.run(scenario())
    assert not unknown_children(caplog)
