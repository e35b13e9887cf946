"""A worker session's own git worktree, read where the session runs: which files it
changed against its base, hunk by hunk (`read_touched`), read again after each of its
calls that may have changed files (any call but a read-only tool's) and each turn's end,
as the agents board reads a worker of the window's own. Qt-free.

The melgui host keeps one for each worker session in a worktree and sends its readings
to the views (a `worktree_files` record, and in a snapshot): a window's board counts a
host worker's files, and compares its changes with the other workers', from them, and
runs no git of its own for it (git's children and the parsing of its output, in the
window's threads, took the window's frames).

The reads are throttled as the board's are (`FileCount`): at most one in flight per
worktree, and changes that arrive meanwhile cause one more read after it, not one each.
Its git runs niced: the host reads for views that draw, and its git on the 10,000-file
worktrees of `bench/bench_host.py --only worktrees` must not take the cores the window
draws with. Niced is not enough when many run at once: the workers' calls end together
(eight legs ending in the same frame), and the readings in the default executor ran
up to six `git diff`s side by side, each with 20 threads checking the files' stat (git's
preload-index, one thread per 500 files): over a hundred runnable threads, whose summed weight
outweighed the window's GUI thread at nice 0, which then waited tens of milliseconds
for a core. So every worktree the host reads is read in ONE thread (`READING_THREAD`),
one git at a time, and git checks the stat in its main thread (`core.preloadIndex`
off: the same CPU, about 10 ms for 10,000 files, in one thread instead of twenty).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from melgui.core.agent.session import AgentSession
from melgui.core.thread.changes import Change, EntryChanged, StateChanged
from melgui.core.thread.entries import CallEntry
from melgui.core.worktrees.git import run_git
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.touched import Touched, read_touched
from melgui.desk.board.file_count import FileCount
from melgui.desk.board.overlap_watch import TouchedReader, read_quietly

READING_THREAD = "melgui-worktree-reading"
# git's stat checks in its main thread, not in one thread per 500 files of the index
READING_CONFIG = ("-c", "core.quotePath=false", "-c", "core.preloadIndex=false")

_pool: ThreadPoolExecutor | None = None
_pool_lock = threading.Lock()


def reading_pool() -> ThreadPoolExecutor:
    """The process's one thread for worktree readings (started on first use)."""
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix=READING_THREAD)
        return _pool


def niced_read(worktree: Worktree) -> Touched:
    """`read_touched` with its git niced, each git in one thread (the host's reading,
    for the views' boards)."""

    def git(args: Sequence[str], folder: Path) -> str:
        return run_git([*READING_CONFIG, *args], folder)  # niced

    return read_touched(worktree, git)


class WorktreeReading:
    """The last reading of `session`'s worktree (`touched`: None until the first read
    ends, or when git could not tell); `on_read(touched)` hears each one that differs
    from the last, on the loop's thread."""

    def __init__(
        self,
        session: AgentSession,
        worktree: Worktree,
        on_read: Callable[[Touched | None], None],
        read: TouchedReader = niced_read,
    ) -> None:
        self.session = session
        self.worktree = worktree
        self.touched: Touched | None = None
        self._on_read = on_read
        self._count: FileCount[Touched] = FileCount(
            read_quietly(read), self._read, executor=reading_pool()
        )
        self._ended: set[str] = set()  # calls whose result was seen
        self._turns = session.thread.state.turns
        self._unsubscribe = session.thread.subscribe(self._on_change, text=False)
        self._again()  # a worktree reopened by a new host may hold changes already

    @property
    def reading(self) -> bool:
        """A read is in flight."""
        return self._count.reading

    def close(self) -> None:
        self._unsubscribe()
        self._count.close()

    def _again(self) -> None:
        self._count.mark_stale()
        self._count.request(self.worktree)
        if not self._count.reading:  # read at once (no event loop running)
            self._read()

    def _on_change(self, change: Change) -> None:
        match change:
            case EntryChanged(entry=CallEntry() as entry) if entry.result is not None:
                if entry.call_id in self._ended:
                    return
                self._ended.add(entry.call_id)
                tool = self.session.loop.catalog.get(entry.name)
                if tool is None or not tool.read_only:  # it may have changed files
                    self._again()
            case StateChanged(state=state) if state.turns != self._turns:
                self._turns = state.turns
                self._again()

    def _read(self) -> None:
        touched = self._count.files
        if touched != self.touched:
            self.touched = touched
            self._on_read(touched)
