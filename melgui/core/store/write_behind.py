"""WriteBehind: a store's writes done on a thread of their own, in the order given.

    future = store.behind.submit(store.put_message, cid, seq, message)

The journal hands its writes here so that encoding, indexing and committing never run on
the event loop's thread. Any other use of the store's connection first waits until what
was handed over is written (`settle`, called by the connection itself): the loop reads
what it wrote, and the connection is used by one thread at a time.
"""

from __future__ import annotations

import atexit
import threading
import weakref
from collections import deque
from collections.abc import Callable
from concurrent.futures import Future
from typing import Any, ParamSpec

P = ParamSpec("P")
_Job = tuple[Callable[..., object], tuple[Any, ...], dict[str, Any], "Future[object]"]


class WriteBehind:
    """One writer thread per store, started on the first write handed over."""

    def __init__(self, name: str = "melgui-history-writer") -> None:
        self._name = name
        self._jobs: deque[_Job] = deque()
        self._queue = threading.Lock()  # guards `_jobs`
        self._writing = threading.Lock()  # held by whoever runs a job: one at a time, in order
        self._wake = threading.Semaphore(0)  # one release a job (and one to stop)
        self._thread: threading.Thread | None = None
        self._last: Future[object] | None = None  # the last write handed over
        self._runner: int | None = None  # the thread running a job, while it does
        self._closed = False

    @property
    def open(self) -> bool:
        return not self._closed

    @property
    def last(self) -> Future[object] | None:
        """The last write handed over (None: none yet): done once every write is."""
        return self._last

    @property
    def busy(self) -> bool:
        """Writes handed over are still being written."""
        last = self._last
        return last is not None and not last.done()

    def submit(
        self, write: Callable[P, object], /, *args: P.args, **kwargs: P.kwargs
    ) -> Future[object]:
        """Run `write` on the writer thread after every write handed over before it."""
        if self._closed:
            raise RuntimeError("the store is closed")
        if self._thread is None:
            self._thread = threading.Thread(target=self._run, name=self._name, daemon=True)
            self._thread.start()
            # A daemon thread is stopped at exit: what it has not written is written first.
            atexit.register(_settle_at_exit, weakref.ref(self))
        future: Future[object] = Future()
        with self._queue:
            self._jobs.append((write, args, kwargs, future))
        self._last = future
        self._wake.release()
        return future

    def settle(self) -> None:
        """Return once every write handed over is done (at once inside a job).

        The caller waits for the write the writer is doing, then does the ones it has
        not begun itself: on a loaded machine the writer may wait long for a core."""
        last = self._last
        if last is None or last.done():
            return
        if threading.get_ident() == self._runner:  # a job's own statements
            return
        with self._writing:
            while self._run_one():
                pass

    def _run_one(self) -> bool:
        """Run the oldest job not begun (the caller holds `_writing`); False: none left."""
        with self._queue:
            if not self._jobs:
                return False
            write, args, kwargs, future = self._jobs.popleft()
        if future.set_running_or_notify_cancel():
            self._runner = threading.get_ident()
            try:
                future.set_result(write(*args, **kwargs))
            except BaseException as exc:  # the submitter reports it, from the future
                future.set_exception(exc)
            finally:
                self._runner = None
        return True

    def _run(self) -> None:
        while True:
            self._wake.acquire()
            with self._writing:
                if not self._run_one() and self._closed:
                    return

    def close(self) -> None:
        """Write what was handed over, then stop the thread; later writes are refused."""
        self.settle()
        self._closed = True
        thread, self._thread = self._thread, None
        if thread is not None:
            self._wake.release()
            thread.join()


def _settle_at_exit(behind: weakref.ref[WriteBehind]) -> None:
    writer = behind()
    if writer is not None:
        writer.settle()
