"""Which files each worker changed, and where two workers meet, kept current as they
edit. Qt-free.

The board tells the watch when an agent may have changed its worktree (a tool call of
its ended, a turn ended, it was added); nothing polls. The watch reads that worktree in
a thread (`read_touched`: git, and a parse of changed Python files), at most one read
per worktree in flight and one more after it for every edit meanwhile, then compares
every worktree's changes (`find_overlaps`, plain Python over the changed files) and
tells its listeners when a worktree's changes or the overlaps changed.

The reader is given: a worktree on another host plugs in its own git runner there. A
worktree the melgui host reads (its worker's session runs there: `WorktreeReading`) is
not read here: its readings are given (`reported`), and compared with the others.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from melgui.core.worktrees.git import GitError
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.overlaps import Overlap, find_overlaps
from melgui.core.worktrees.overlap.touched import Touched, read_touched
from melgui.desk.board.file_count import FileCount

TouchedReader = Callable[[Worktree], Touched]

log = logging.getLogger(__name__)


def read_quietly(read: TouchedReader) -> Callable[[Worktree], Touched | None]:
    def reading(worktree: Worktree) -> Touched | None:
        try:
            return read(worktree)
        except GitError:
            return None  # the worktree is gone or git is slow: no overlap to tell

    return reading


class OverlapWatch:
    """The changes of every followed worktree, and their overlaps (`overlaps`)."""

    def __init__(self, read: TouchedReader = read_touched) -> None:
        self._read = read_quietly(read)
        self._readers: dict[str, FileCount[Touched]] = {}
        self._reported: dict[str, Touched | None] = {}  # read where the session runs
        self._listeners: list[Callable[[], None]] = []
        self._told: dict[str, Touched | None] = {}  # each worktree's reading, as last told
        self.overlaps: tuple[Overlap, ...] = ()

    def subscribe(self, listener: Callable[[], None]) -> Callable[[], None]:
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def edited(self, key: str, worktree: Worktree | None) -> None:
        """Agent `key` may have changed `worktree` (None: it has none, nothing to read)."""
        if worktree is None:
            return
        reader = self._readers.get(key)
        if reader is None:
            reader = FileCount(self._read, lambda: self._compare())
            self._readers[key] = reader
        reader.mark_stale()
        reader.request(worktree)
        if not reader.reading:  # read at once (no event loop): compare now
            self._compare()

    def reported(self, key: str, touched: Touched | None) -> None:
        """Agent `key`'s worktree as read where its session runs (the melgui host): taken
        as it is, never read here."""
        self._reported[key] = touched
        self._compare()

    def forget(self, key: str) -> None:
        reader = self._readers.pop(key, None)
        if reader is not None:
            reader.close()
        if reader is not None or key in self._reported:
            self._reported.pop(key, None)
            self._compare()

    def touched(self, key: str) -> Touched | None:
        if key in self._reported:
            return self._reported[key]
        reader = self._readers.get(key)
        return reader.files if reader is not None else None

    def unlisted(self) -> dict[str, int]:
        """The agents whose reading lists only some of its files (the host cuts one at
        FILES_MAX), and how many it does not: their overlaps there are not found."""
        return {key: t.more for key, t in self._told.items() if t is not None and t.more}

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()
        self._reported.clear()
        self._listeners.clear()

    def _compare(self) -> None:
        readings = {key: reader.files for key, reader in self._readers.items()}
        readings.update(self._reported)
        current = {key: touched for key, touched in readings.items() if touched is not None}
        overlaps = find_overlaps(current)
        if overlaps == self.overlaps and readings == self._told:
            return
        self.overlaps, self._told = overlaps, readings
        for listener in list(self._listeners):
            listener()
