"""The asyncio loop that runs inside Qt's: qasync's, plus the async-generator hooks, and
still the running loop in the last pass over Qt's events of `run_until_complete`.

qasync's `run_forever` does not install `sys.set_asyncgen_hooks` as asyncio's does, so
an async generator left unfinished (an HTTP stream ended early) is finalized by the
garbage collector outside the loop ("async generator ignored GeneratorExit") instead
of being closed on the loop. This subclass installs asyncio's own hooks while running,
and lets Qt, not the garbage collector, delete qasync's helper objects when it closes.

Its callbacks run with it as asyncio's running loop, also when Qt runs them outside
`run_forever` (qasync's `run_until_complete` processes Qt's events once more after its
loop stopped; a test harness processes events between tests): a task stepped there
would otherwise fail at its first `asyncio.wait` or `get_running_loop()` ("no running
event loop"), and its cleanup with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

import qasync
from PySide6.QtCore import QTimerEvent


class _RunningTimer(qasync._SimpleTimer):
    """qasync's timer, whose callbacks see their loop as asyncio's running loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__()
        self._loop = loop

    def timerEvent(self, event: QTimerEvent) -> None:
        if asyncio.events._get_running_loop() is not None:
            super().timerEvent(event)
            return
        asyncio.events._set_running_loop(self._loop)
        try:
            super().timerEvent(event)
        finally:
            asyncio.events._set_running_loop(None)


class QtEventLoop(qasync.QEventLoop):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._timer = _RunningTimer(self)  # before any callback: qasync's holds none yet

    def run_forever(self) -> Any:
        previous = sys.get_asyncgen_hooks()
        sys.set_asyncgen_hooks(
            firstiter=self._asyncgen_firstiter_hook,
            finalizer=self._asyncgen_finalizer_hook,
        )
        try:
            return super().run_forever()
        finally:
            sys.set_asyncgen_hooks(*previous)

    def close(self) -> None:
        if self.is_closed() or self.is_running():
            super().close()
            return
        with contextlib.suppress(RuntimeError):  # Qt already gone (interpreter exit)
            self.run_until_complete(self.shutdown_asyncgens())
        super().close()
        # qasync's timer and signaller QObjects belong to Python: if the garbage
        # collector frees them later, it may do so inside their own timer event, and
        # Qt then touches a freed object. Let Qt delete them at a safe point instead.
        for name in ("_timer", "_QEventLoop__call_soon_signaller"):
            helper = getattr(self, name, None)
            if helper is not None:
                with contextlib.suppress(RuntimeError):
                    helper.deleteLater()
