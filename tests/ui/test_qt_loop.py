"""The app's asyncio loop inside Qt's (melgui/ui/runtime/qt_loop.py): a callback Qt runs
while the loop is not in `run_forever` (qasync's last pass over Qt's events after
`run_until_complete`, a test harness's event processing) still sees its loop as the
running one. Without it an ACP pane's receive loop, woken by the agent's message just as
a step of a test ended, died of "no running event loop", 1 run in 6 under a CPU hog."""

from __future__ import annotations

import asyncio

from PySide6.QtWidgets import QApplication

from melgui.ui.runtime.qt_loop import QtEventLoop


def test_a_task_stepped_by_qt_outside_the_loop_sees_its_loop(
    qloop: QtEventLoop, qapp: QApplication
) -> None:
    seen: list[asyncio.AbstractEventLoop] = []

    async def step() -> None:
        await asyncio.sleep(0)  # resumed by the loop's timer, from Qt's events
        seen.append(asyncio.get_running_loop())
        await asyncio.wait({asyncio.ensure_future(asyncio.sleep(0))}, timeout=1)

    task = qloop.create_task(step())
    for _ in range(200):  # the loop is not running: only Qt's event processing steps it
        if task.done():
            break
        qapp.processEvents()
    assert task.done() and task.exception() is None
    assert seen == [qloop] and asyncio.events._get_running_loop() is None


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
