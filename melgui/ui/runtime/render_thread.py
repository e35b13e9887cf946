"""One worker thread for the UI's pure-Python rendering, off the GUI thread.

Markdown and Pygments of the chat's open tail, the inspector's pretty JSON and coloured
diffs are strings made from strings: they run here, and the GUI thread only puts the
prepared HTML into its widgets. One thread, so jobs finish in the order they were
submitted. Rendering holds the GIL in small steps; the switch interval is lowered (as
the terminal's reader does) so the GUI thread gets it back within a millisecond.

A millisecond is still long: drawing, the GUI thread takes and gives back the GIL
hundreds of times a frame (each Python override Qt calls, each call into Qt), and while
the render thread ran it waited for it at many of them (a fifth of its time in a flood
of eight panes). So a job renders its steps while the GUI thread waits for events, as
its event dispatcher says (`yield_to_gui` between steps), and only a step every
`GUI_WAIT_S` while the GUI thread is busy.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

import shiboken6
from PySide6.QtCore import QAbstractEventDispatcher, QCoreApplication, QObject, Qt, Signal

THREAD_NAME = "melgui-render"
SWITCH_INTERVAL_S = 0.001
GUI_WAIT_S = 0.004  # the longest a render step waits for the GUI thread to be idle

# Set while the GUI thread waits for events (its dispatcher is about to block), cleared
# when it wakes; None until watched (no application yet: steps do not wait).
_gui_idle: threading.Event | None = None

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
        _watch_gui_thread()
        return _pool


def _watch_gui_thread() -> None:
    global _gui_idle
    app = QCoreApplication.instance()
    if _gui_idle is not None or app is None:
        return
    dispatcher = QAbstractEventDispatcher.instance(app.thread())
    if dispatcher is None:
        return
    idle = threading.Event()
    dispatcher.aboutToBlock.connect(idle.set, Qt.ConnectionType.DirectConnection)
    dispatcher.awake.connect(idle.clear, Qt.ConnectionType.DirectConnection)
    _gui_idle = idle


def yield_to_gui() -> None:
    """Between two steps of a render job: wait until the GUI thread waits for events,
    `GUI_WAIT_S` at most (it may be busy for long: the job goes on, a step at a time)."""
    idle = _gui_idle
    if idle is not None and on_render_thread():
        idle.wait(GUI_WAIT_S)


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
