"""Progress: each report of a call in flight reaches the listener tied to its call, a
call that keeps reporting outlives its idle timeout, the ceiling still ends it, and a
stop mid-call tells the server."""

from __future__ import annotations

import asyncio
from pathlib import Path

from melgui.core.protocol.tooling import RUNNING_CALL, ToolOutcome
from melgui.tools.mcp.calls import CEILING_FACTOR, Flight
from melgui.tools.mcp.manager import McpManager
from tests.fakes.mcp import fake_stdio, running
from tests.tools.mcp.test_failures import logged


def steps(manager: McpManager, **arguments: object) -> asyncio.Future[ToolOutcome]:
    async def run() -> ToolOutcome:
        RUNNING_CALL.set(("assistant", "s1", "mcp__fake__steps"))
        return await manager.bridge.registry.run("mcp__fake__steps", dict(arguments))

    return asyncio.ensure_future(run())


async def test_progress_reaches_the_call_and_keeps_it_alive_past_the_idle_timeout(
    tmp_path: Path,
) -> None:
    async with running(str(tmp_path), fake_stdio(timeout=1.0)) as manager:
        heard: list[tuple[str, str, float | None]] = []

        def listen(flight: Flight) -> None:
            assert flight.progress is not None
            heard.append((flight.call.call_id, flight.progress.line(), flight.progress.fraction))

        manager.servers["fake"].on_progress = listen
        # Five reports 0.4 s apart: 2 s in all, twice the idle timeout.
        outcome = await steps(manager, count=5, pause=0.4)
        assert (outcome.status, outcome.content) == ("ok", "5 steps done")
        assert heard == [("s1", f"{n} of 5 · step {n} of 5", n / 5) for n in range(1, 6)]
        assert '"progressToken"' in manager.servers["fake"].log.text()  # asked for


async def test_a_silent_call_is_cut_at_the_idle_timeout_with_its_last_progress(
    tmp_path: Path,
) -> None:
    async with running(str(tmp_path), fake_stdio(timeout=1.0)) as manager:
        # One report, then 1.5 s of silence: more than the idle timeout.
        outcome = await steps(manager, count=2, pause=1.5)
        assert outcome.status == "error"
        assert "did not answer steps within 1 s" in outcome.content
        assert await logged(manager.servers["fake"].log, '"method":"notifications/cancelled"')


async def test_the_ceiling_ends_a_call_that_keeps_reporting(tmp_path: Path) -> None:
    timeout = 0.3
    async with running(str(tmp_path), fake_stdio(timeout=timeout)) as manager:
        pause = 0.1
        count = int(timeout * CEILING_FACTOR / pause) + 10  # well past the ceiling
        outcome = await steps(manager, count=count, pause=pause)
        assert outcome.status == "error"
        assert f"did not finish steps within {timeout * CEILING_FACTOR:g} s" in outcome.content
        assert await logged(manager.servers["fake"].log, '"method":"notifications/cancelled"')
        echo = await manager.bridge.registry.run("mcp__fake__echo", {"text": "on"})
        assert echo.content == "on"
