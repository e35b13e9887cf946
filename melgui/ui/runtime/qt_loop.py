"""The asyncio loop that runs inside Qt's: qasync's, plus the async-generator hooks, and
still the running loop in the last pass over Qt's events of `run_until_complete`.

qasync's `run_forever` does not install `sys.set_asyncgen_hooks` as asyncio's does, so
an async generator left unfinished (an HTTP stream ended early) is finalized by the
garbage collector outside the loop ("async generator ignored GeneratorExit") instead
of being closed on the loop. This subclass installs asyncio's own hooks while running,
and lets Qt, not the garbage collector, delete qasync's helper objects when it closes.
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
from typing import Any

import qasync


class QtEventLoop(qasync.QEventLoop):
    _last_pass = False  # in run_until_complete: qasync's last pass over Qt's events follows
    _running_for_last_pass = False

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
            if self._last_pass:
                asyncio.events._set_running_loop(self)
                self._running_for_last_pass = True

    def run_until_complete(self, future: Any) -> Any:
        """qasync's, with this loop still the running one in its last pass over Qt's
        events. qasync makes that pass after `run_forever` has unset the running loop: a
        callback ready just then (a task woken by an agent's message arriving as a turn
        ended, likelier on a busy machine) ran with no running loop, and what it started
        failed with "no running event loop" (an ACP pane's receive loop died of it)."""
        self._last_pass = True
        try:
            return super().run_until_complete(future)
        finally:
            self._last_pass = False
            if self._running_for_last_pass:
                self._running_for_last_pass = False
                asyncio.events._set_running_loop(None)

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
