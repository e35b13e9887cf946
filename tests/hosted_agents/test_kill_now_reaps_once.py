"""An agent's process killed at once (kill_now: a pane closed, the window quitting) just
after it ended on its own, before asyncio's child watcher thread waited for it: its pipes
are released without reaping it behind the watcher (transport.close() polls), so it keeps
its exit status and asyncio logs no "Unknown child process" on stderr."""

from __future__ import annotations

import asyncio
import logging

import pytest

from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.desk.hosted_agents.process import AgentProcess
from tests.fakes.late_watcher import REASON, SUPPORTED, late_watcher, unknown_children, until_zombie

pytestmark = pytest.mark.skipif(not SUPPORTED, reason=REASON)


def test_an_agent_killed_just_after_it_ended_is_reaped_once(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    may_wait = late_watcher(monkeypatch)

    async def scenario() -> None:
        agent = await AgentProcess.start(AgentCommand("ends", ("sh", "-c", "exit 5")), "/")
        await until_zombie(agent.process.pid)
        agent.kill_now()
        may_wait.set()
        assert await agent.wait() == 5

    with caplog.at_level(logging.WARNING, logger="asyncio"):
        asyncio.run(scenario())
    assert not unknown_children(caplog)
