"""Which folders of a tree had entries added, removed or renamed since the last look
(Linux inotify, read without waiting).

A search looks for the project's rule files (.gitignore) before it runs, and a walk
that stats every folder to see whether one came or went cost more than a millisecond
on 500 folders: most of what find_files spent beyond ripgrep's own work. A watch per
folder says the same for the price of one read. Watches and inotify instances are
per-user resources that editors use too: the process holds one instance for all its
trees and at most an eighth of the user's watches; a folder past that (or any folder
where inotify is missing) is stat'ed as before.
"""

from __future__ import annotations

import os
import struct
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ctypes

_IN_MOVED_FROM = 0x00000040
_IN_MOVED_TO = 0x00000080
_IN_CREATE = 0x00000100
_IN_DELETE = 0x00000200
_IN_DELETE_SELF = 0x00000400
_IN_MOVE_SELF = 0x00000800
_IN_Q_OVERFLOW = 0x00004000
_IN_IGNORED = 0x00008000
_IN_ONLYDIR = 0x01000000
_IN_DONT_FOLLOW = 0x02000000
_IN_CLOEXEC = 0o2000000
# An entry came, went or was renamed; or the folder itself was deleted or moved.
_MASK = _IN_CREATE | _IN_DELETE | _IN_MOVED_FROM | _IN_MOVED_TO | _IN_DELETE_SELF | _IN_MOVE_SELF
_GONE = _IN_DELETE_SELF | _IN_MOVE_SELF | _IN_IGNORED
_EVENT = struct.Struct("iIII")  # wd, mask, cookie, length of the name that follows


def _libc() -> ctypes.CDLL | None:
    if os.uname().sysname != "Linux":
        return None
    import ctypes  # with the first watch (0.4 MB a process that watches nothing never holds)
    import ctypes.util

    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c") or None, use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
        libc.inotify_rm_watch.argtypes = [ctypes.c_int, ctypes.c_int]
    except (OSError, AttributeError):
        return None
    return libc


def _watch_budget() -> int:
    try:
        with open("/proc/sys/fs/inotify/max_user_watches", encoding="ascii") as limit:
            return int(limit.read()) // 8
    except (OSError, ValueError):
        return 1024


class FolderChanges:
    """The watches of one tree (bytes paths) and, on each `changed()`, its folders whose
    listing may differ since the last call."""

    def __init__(self, hub: _Inotify) -> None:
        self._hub = hub
        self.watched: dict[bytes, int] = {}  # folder → wd
        self._changed: set[bytes] = set()
        self._lost = False

    @classmethod
    def open(cls) -> FolderChanges | None:
        """A new tree's watches, or None where inotify is missing."""
        hub = _hub()
        return None if hub is None else cls(hub)

    def watch(self, folder: bytes) -> bool:
        """Watch `folder` (call it before listing it: a change after is then seen);
        False when it cannot be (the budget spent, the folder gone or unreadable)."""
        return self._hub.watch(self, folder)

    def changed(self) -> set[bytes] | None:
        """The folders whose entries changed since the last call (a deleted or moved
        one, and every folder watched below it, is no longer watched); None when events
        were lost (the kernel's queue overflowed): any folder may have changed."""
        return self._hub.take(self)

    def close(self) -> None:
        self._hub.close(self)


class _Inotify:
    """The process's one inotify instance; its events go to the trees that watch each
    folder (a folder may belong to two: a project and a folder inside it)."""

    def __init__(self, libc: ctypes.CDLL, fd: int) -> None:
        self._libc, self._fd = libc, fd
        self._lock = threading.Lock()
        self._owners: dict[int, dict[FolderChanges, bytes]] = {}  # wd → tree → folder
        self._budget = _watch_budget()

    def watch(self, tree: FolderChanges, folder: bytes) -> bool:
        with self._lock:
            if len(self._owners) >= self._budget:
                return False
            wd = self._libc.inotify_add_watch(
                self._fd, folder, _MASK | _IN_ONLYDIR | _IN_DONT_FOLLOW
            )
            if wd < 0:
                return False
            owners = self._owners.setdefault(wd, {})
            known = owners.get(tree)
            if known is not None and known != folder:  # one folder under two paths
                return False
            owners[tree] = folder
            tree.watched[folder] = wd
            return True

    def take(self, tree: FolderChanges) -> set[bytes] | None:
        with self._lock:
            self._read()
            changed, lost = tree._changed, tree._lost
            tree._changed, tree._lost = set(), False
        return None if lost else changed

    def _read(self) -> None:
        while True:
            try:
                data = os.read(self._fd, 64 * 1024)
            except OSError:  # BlockingIOError: nothing more
                return
            offset = 0
            while offset + _EVENT.size <= len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                offset += _EVENT.size + length  # the name that follows is not needed
                if mask & _IN_Q_OVERFLOW:
                    for owners in self._owners.values():
                        for tree in owners:
                            tree._lost = True
                    continue
                for tree, folder in list(self._owners.get(wd, {}).items()):
                    tree._changed.add(folder)
                    if mask & _GONE:  # its parent's event tells the rest (if watched)
                        self._forget(tree, folder)

    def _forget(self, tree: FolderChanges, folder: bytes) -> None:
        """`tree` stops watching `folder` and every folder below it (paths that may now
        name other folders), and counts them changed."""
        below = folder + b"/"
        tree._changed.add(folder)
        for path in [p for p in tree.watched if p == folder or p.startswith(below)]:
            tree._changed.add(path)
            self._drop(tree, path, tree.watched.pop(path))

    def _drop(self, tree: FolderChanges, folder: bytes, wd: int) -> None:
        owners = self._owners.get(wd)
        if owners is None or owners.get(tree) != folder:
            return
        del owners[tree]
        if not owners:
            del self._owners[wd]
            self._libc.inotify_rm_watch(self._fd, wd)  # an error: the kernel dropped it

    def close(self, tree: FolderChanges) -> None:
        with self._lock:
            for folder, wd in list(tree.watched.items()):
                self._drop(tree, folder, wd)
            tree.watched.clear()


_hub_lock = threading.Lock()
_the_hub: list[_Inotify | None] = []  # made on first use: [] until then


def _hub() -> _Inotify | None:
    with _hub_lock:
        if not _the_hub:
            libc = _libc()
            fd = libc.inotify_init1(os.O_NONBLOCK | _IN_CLOEXEC) if libc is not None else -1
            _the_hub.append(_Inotify(libc, fd) if libc is not None and fd >= 0 else None)
        return _the_hub[0]
