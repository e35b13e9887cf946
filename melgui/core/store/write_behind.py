"""WriteBehind: a store's writes done on a thread of their own, in the order given.

    future = store.behind.submit(store.put_message, cid, seq, message)

The journal hands its writes here so that encoding, indexing and committing never run on
the event loop's thread. Any other use of the store's connection first waits until what
was handed over is written (`settle`, called by the connection itself): the loop reads
what it wrote, and the connection is used by one thread at a time.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from typing import ParamSpec

P = ParamSpec("P")


class WriteBehind:
    """One writer thread per store, started on the first write handed over."""

    def __init__(self, name: str = "melgui-history-writer") -> None:
        self._name = name
        self._pool: ThreadPoolExecutor | None = None
        self._worker: int | None = None  # the writer thread's ident, once it runs
        self._last: Future[object] | None = None  # the last write handed over
        self._closed = False

    @property
    def open(self) -> bool:
        return not self._closed

    def submit(
        self, write: Callable[P, object], /, *args: P.args, **kwargs: P.kwargs
    ) -> Future[object]:
        """Run `write` on the writer thread after every write handed over before it."""
        if self._closed:
            raise RuntimeError("the store is closed")
        if self._pool is None:
            self._pool = ThreadPoolExecutor(
                1, thread_name_prefix=self._name, initializer=self._started
            )
        future = self._pool.submit(write, *args, **kwargs)
        self._last = future
        return future

    def _started(self) -> None:
        self._worker = threading.get_ident()

    def settle(self) -> None:
        """Wait until every write handed over is done (at once on the writer thread)."""
        last = self._last
        if last is None or last.done() or threading.get_ident() == self._worker:
            return
        last.exception()  # waits; a failure is the submitter's to report, not the reader's

    @property
    def busy(self) -> bool:
        """Writes handed over are still being written."""
        last = self._last
        return last is not None and not last.done()

    def close(self) -> None:
        """Write what was handed over, then stop the thread; later writes are refused."""
        self.settle()
        self._closed = True
        if self._pool is not None:
            self._pool.shutdown(wait=True)
            self._pool = None
