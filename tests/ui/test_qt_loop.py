"""The app's asyncio loop inside Qt's (melgui/ui/runtime/qt_loop.py): a callback Qt runs
while the loop is not in `run_forever` (qasync's last pass after `run_until_complete`,
a test harness's event processing) still sees its loop as the running one."""

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
