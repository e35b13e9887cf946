"""The app's loop is the running one whenever its callbacks run, also in the last pass
over Qt's events that `run_until_complete` makes (qasync unset it before that pass: an
ACP pane's receive loop, woken by the agent's message just as a step of a test ended,
died of "no running event loop", 1 run in 6 under a CPU hog)."""

from __future__ import annotations

import asyncio

from melgui.ui.runtime.qt_loop import QtEventLoop


def test_a_callback_ready_as_run_until_complete_ends_has_the_running_loop(
    qloop: QtEventLoop,
) -> None:
    seen: list[object] = []

    def probe() -> None:
        try:
            seen.append(asyncio.get_running_loop())
        except RuntimeError as exc:
            seen.append(exc)

    async def step() -> int:
        return 1

    for _ in range(3):
        task = qloop.create_task(step())
        task.add_done_callback(lambda _done: qloop.call_soon(probe))  # after qasync's stop
        assert qloop.run_until_complete(task) == 1
    assert seen == [qloop] * 3
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass  # and not running once it has returned
    else:
        raise AssertionError("the loop is still the running one after run_until_complete")
