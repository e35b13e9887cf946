"""One worker thread for the UI's pure-Python rendering, off the GUI thread.

Markdown and Pygments of the chat's open tail, the inspector's pretty JSON and coloured
diffs are strings made from strings: they run here, and the GUI thread only puts the
prepared HTML into its widgets. One thread, so jobs finish in the order they were
submitted. Rendering holds the GIL in small steps; the switch interval is lowered (as
the terminal's reader does, and further) so the GUI thread gets it back within a fifth of
a millisecond each time Qt calls its Python (an event filter, a paint, a slot): at 1 ms,
the few dozen such calls of a frame painting eight streaming panes waited a frame or two
for the GIL while the render thread rendered their Markdown (bench_host's unpaced panes).

The GUI thread's own drawing turns (the flush scheduler's tick: inserting what was
rendered, the views hearing what the agents did) are its alone: the
render thread takes `render_piece()` around each piece it renders (a segment of a
message), and waits there while the GUI thread is in `gui_turn()`, without the GIL. A
piece under way when a turn begins is finished first (a segment: well under a
millisecond; the turn waits 2 ms at most, so a huge segment never holds the window up
more than it did).
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Qt, Signal

THREAD_NAME = "melgui-render"
SWITCH_INTERVAL_S = 0.0002
TURN_WAIT_S = 0.002  # the longest a GUI turn waits for the piece being rendered

_pool: ThreadPoolExecutor | None = None
_lock = threading.Lock()
# Held by the GUI thread in its drawing turns, by the render thread around each piece.
# Reentrant: a turn may run inside another (a tick from a nested event loop).
_turns = threading.RLock()
# Clear while the GUI thread waits for a turn: the render thread, between two pieces,
# lets it have the lock first (a lock is not fair: the thread that just let it go takes
# it again before a waiting one wakes, and the turn waited its whole TURN_WAIT_S).
_no_turn_asked = threading.Event()
_no_turn_asked.set()


@contextmanager
def gui_turn() -> Iterator[bool]:
    """On the GUI thread: no rendering runs on the render thread meanwhile (the piece
    under way is finished first, TURN_WAIT_S at most: a huge one goes on beside the
    turn, as before), so the GUI thread's Python keeps the GIL."""
    _no_turn_asked.clear()
    try:
        held = _turns.acquire(timeout=TURN_WAIT_S)
    finally:
        _no_turn_asked.set()
    try:
        yield held  # False: the piece under way goes on beside the turn
    finally:
        if held:
            _turns.release()


@contextmanager
def render_piece() -> Iterator[None]:
    """On the render thread, around one piece of rendering: waits while the GUI thread
    is in a turn. Never around anything that waits for the GUI thread."""
    _no_turn_asked.wait()  # set again within TURN_WAIT_S
    with _turns:
        yield


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
