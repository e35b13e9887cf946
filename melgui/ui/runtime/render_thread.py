"""One worker thread for the UI's pure-Python rendering, off the GUI thread.

Markdown and Pygments of the chat's open tail, the inspector's pretty JSON and coloured
diffs are strings made from strings: they run here, and the GUI thread only puts the
prepared HTML into its widgets. One thread, so jobs finish in the order they were
submitted. Rendering holds the GIL in small steps; the switch interval is lowered (as
the terminal's reader does) so the GUI thread gets it back within a millisecond.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal

THREAD_NAME = "melgui-render"
SWITCH_INTERVAL_S = 0.001

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()


def render_pool() -> ThreadPoolExecutor:
    """The process's render thread (started on first use)."""
    global _pool
    with _lock:
        if _pool is None:
            if sys.getswitchinterval() > SWITCH_INTERVAL_S:
                sys.setswitchinterval(SWITCH_INTERVAL_S)
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=THREAD_NAME)
        return _pool


def on_render_thread() -> bool:
    return threading.current_thread().name.startswith(THREAD_NAME)


class RenderJobs(QObject):
    """Runs functions on the render thread for one widget; `deliver(ticket, result)` is
    called on the GUI thread, always later (queued), in the order submitted. A job that
    raised delivers its exception. Nothing is delivered once this object is deleted."""

    _done = Signal(int, object)

    def __init__(
        self, deliver: Callable[[int, object], None], parent: QObject | None = None
    ) -> None:
        super().__init__(parent)
        self._last_ticket = 0
        self._done.connect(deliver, Qt.ConnectionType.QueuedConnection)

    def submit(self, function: Callable[..., Any], *args: Any) -> int:
        """Queue `function(*args)`; returns its ticket (increasing)."""
        self._last_ticket += 1
        ticket = self._last_ticket
        future = render_pool().submit(function, *args)
        future.add_done_callback(lambda done: self._finished(ticket, done))
        return ticket

    def _finished(self, ticket: int, done: Future[Any]) -> None:
        if done.cancelled() or not shiboken6.isValid(self):
            return
        error = done.exception()
        self._done.emit(ticket, error if error is not None else done.result())
