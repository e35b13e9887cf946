"""`within` raises a cancel that comes in the same loop turn as the awaited result, where
Python 3.11's `asyncio.wait_for` returned the result and let the cancelled task run on (a
remote link's close then waited forever on its supervisor)."""

from __future__ import annotations

import asyncio

import pytest

from melgui.core.runtime.deadline import within


def test_a_cancel_that_comes_with_the_result_is_raised() -> None:
    async def scenario() -> None:
        loop = asyncio.get_running_loop()
        result: asyncio.Future[int] = loop.create_future()
        went_on = []

        async def waits() -> None:
            await within(result, 2.0)
            went_on.append(True)  # where wait_for's swallowed cancel let it go

        task = asyncio.ensure_future(waits())
        await asyncio.sleep(0)  # it waits on the result
        result.set_result(1)
        task.cancel()  # in the same turn
        with pytest.raises(asyncio.CancelledError):
            await task
        assert went_on == []

    asyncio.run(scenario())


def test_the_limit_raises_timeout_and_cancels_what_it_waited_on() -> None:
    async def scenario() -> None:
        slow = asyncio.ensure_future(asyncio.sleep(10))
        with pytest.raises(TimeoutError):
            await within(slow, 0.01)
        await asyncio.sleep(0)
        assert slow.cancelled()

    asyncio.run(scenario())


def test_a_shielded_wait_runs_on_after_the_limit() -> None:
    async def scenario() -> int:
        done = asyncio.ensure_future(asyncio.sleep(0.05, result=7))
        with pytest.raises(TimeoutError):
            await within(asyncio.shield(done), 0.01)
        return await done

    assert asyncio.run(scenario()) == 7


def test_no_limit_waits_for_the_result() -> None:
    assert asyncio.run(within(asyncio.sleep(0.01, result="ok"), None)) == "ok"
