"""One agent's reading of its worktree (the files it changed, or what `overlap_watch`
reads), done by git off the loop's thread.

git on a large repository takes tens to hundreds of milliseconds; the board asks after
every tool call of every worktree worker, so the count is read in a thread: at most one
read per worktree in flight, and changes that arrive meanwhile cause one more read after
it, not one each. Listeners hear `on_counted()` (on the loop's thread) when a read ends.
Without a running event loop (a script, a plain test) the count is read at once. The
reads run in the loop's default executor, or in `executor` when one is given (readings
that must not run side by side share one thread).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from concurrent.futures import Executor
from typing import Generic, TypeVar

from melgui.core.worktrees.model import Worktree

T = TypeVar("T")
FileCounter = Callable[[Worktree], list[str] | None]

log = logging.getLogger(__name__)


class FileCount(Generic[T]):
    """The last reading of one worktree (`files`: None until the first read ends, or
    when git could not tell)."""

    def __init__(
        self,
        counter: Callable[[Worktree], T | None],
        on_counted: Callable[[], None],
        executor: Executor | None = None,
    ) -> None:
        self._counter = counter
        self._executor = executor
        self._on_counted = on_counted
        self.files: T | None = None
        self._worktree: Worktree | None = None
        self._stale = True
        self._task: asyncio.Task[None] | None = None

    def mark_stale(self) -> None:
        """The worktree may have changed: the next `request` reads it again."""
        self._stale = True

    @property
    def reading(self) -> bool:
        return self._task is not None

    def request(self, worktree: Worktree) -> None:
        """Read `worktree`'s count again if it may have changed since the last read."""
        if worktree != self._worktree:
            self._worktree = worktree
            self._stale = True
        if not self._stale or self._task is not None:
            return  # current, or a read in flight will see the change when it ends
        self._stale = False
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.files = self._read(worktree)
            return
        self._task = loop.create_task(self._read_until_current(), name="counting files")

    def close(self) -> None:
        if self._task is not None:
            self._task.cancel()  # a thread's git run ends on its own; its count is dropped
            self._task = None

    async def _read_until_current(self) -> None:
        try:
            while self._worktree is not None:
                worktree = self._worktree
                if self._executor is None:
                    self.files = await asyncio.to_thread(self._read, worktree)
                else:
                    loop = asyncio.get_running_loop()
                    self.files = await loop.run_in_executor(self._executor, self._read, worktree)
                if not self._stale and worktree == self._worktree:
                    break
                self._stale = False  # changed meanwhile: once more, for all of them
        finally:
            self._task = None
        self._on_counted()

    def _read(self, worktree: Worktree) -> T | None:
        try:
            return self._counter(worktree)
        except Exception:  # a count is a hint on the board; never worth a traceback loop
            log.exception("Reading the worktree %s failed", worktree.path)
            return None
