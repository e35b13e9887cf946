"""Starting coroutines from Qt slots: keep a reference to each task and report its failure.

A task that nobody references can be garbage-collected mid-flight, and an exception in
a fire-and-forget task is otherwise lost; `TaskKeeper.spawn` fixes both.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Coroutine
from typing import Any, TypeVar

log = logging.getLogger(__name__)

T = TypeVar("T")
ErrorSink = Callable[[str], None]


class TaskKeeper:
    """Owns the tasks started from the UI; `aclose` cancels and awaits them all."""

    def __init__(self, on_error: ErrorSink | None = None) -> None:
        self.on_error = on_error
        self._tasks: set[asyncio.Task[Any]] = set()

    def spawn(self, coro: Coroutine[Any, Any, T], *, what: str) -> asyncio.Task[T]:
        """Run `coro` on the running loop; a failure is logged and sent to `on_error`."""
        task = asyncio.get_event_loop().create_task(coro, name=what)
        self._tasks.add(task)
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        self._tasks.discard(task)
        if task.cancelled():
            return
        exc = task.exception()
        if exc is None:
            return
        log.error("%s failed", task.get_name(), exc_info=exc)
        if self.on_error is not None:
            self.on_error(f"{task.get_name()} failed: {type(exc).__name__}: {exc}")

    @property
    def running(self) -> int:
        return len(self._tasks)

    async def aclose(self) -> None:
        tasks = list(self._tasks)
        for task in tasks:
            task.cancel()
        for task in tasks:
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
