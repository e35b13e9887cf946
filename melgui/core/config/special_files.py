"""Reading a folder's small control files (ignore and attribute rules) without hanging.

A `.gitignore`, `.gitattributes` or `.git/info/exclude` comes with the folder, and may be
a FIFO (opening it waits for a writer that never comes), a device (`/dev/zero` never
ends), or a link to one. They are read only when they are regular files, up to a size
cap; anything else is a named skip with a note, never a hang. Call these off the event
loop (`asyncio.to_thread`): even a regular file can sit on a slow disk.
"""

from __future__ import annotations

import os
import stat
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field

from melgui.core.config.folder_changes import FolderChanges

MAX_RULES_BYTES = 1024 * 1024
RULE_FILES = (".gitignore", ".gitattributes")
INFO_RULE_FILES = ("info/exclude", "info/attributes")  # in a git directory

_KINDS = (
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
    (stat.S_ISDIR, "a folder"),
)


@dataclass(frozen=True, slots=True)
class RulesText:
    text: str  # "" when skipped or absent
    note: str | None = None  # why it was skipped, naming the file


def kind(mode: int) -> str:
    """What a non-regular file is, in words."""
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def special(path: str) -> str | None:
    """Why `path` (or what a link there points to) must not be opened; None when it is a
    regular file or absent."""
    try:
        info = os.stat(path)  # follows a link: a link to /dev/zero is /dev/zero
    except OSError:
        return None
    if stat.S_ISREG(info.st_mode):
        return None
    linked = " (through a symlink)" if os.path.islink(path) else ""
    return f"{path} is {kind(info.st_mode)}{linked}"


def read_rules(path: str, cap: int = MAX_RULES_BYTES) -> RulesText:
    """The text of a rules file, or "" with a note when it is special or over `cap`."""
    why = special(path)
    if why is not None:
        return RulesText("", f"skipped {why}")
    try:
        # O_NONBLOCK: a FIFO swapped in after the check does not block the open.
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return RulesText("")
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return RulesText("", f"skipped {path}: it is {kind(info.st_mode)}")
        if info.st_size > cap:
            return RulesText("", f"skipped {path}: {info.st_size} bytes, over the {cap} cap")
        data = os.read(fd, cap + 1)
    except OSError:
        return RulesText("")
    finally:
        os.close(fd)
    return RulesText(data[:cap].decode("utf-8", "surrogateescape"))


# mtime, subfolders (as bytes: a stat of a bytes path skips the str encoding, a good part
# of a walk of thousands of folders), (file, why) of the special rule files, the regular
# rule files, whether the folder holds a `.git` (a folder or a file), and its hidden
# subfolders (`.git` too)
Listing = tuple[int, list[bytes], list[tuple[str, str]], list[str], bool, list[bytes]]
_RULE_NAMES = tuple(os.fsencode(name) for name in RULE_FILES)


def special_rule_files(root: str, cache: dict[bytes, Listing]) -> Iterator[tuple[str, str]]:
    """(path, why) of every `.gitignore`/`.gitattributes` under `root` (outside `.git`
    folders) that is not a regular file; `cache` keeps each folder's listing by its
    mtime, so a second walk only stats the folders."""
    yield from rule_files(root, cache).special


@dataclass(frozen=True, slots=True)
class RuleFiles:
    """The `.gitignore`/`.gitattributes` files under a folder (outside `.git` folders)."""

    special: list[tuple[str, str]]  # (path, why) of each that is not a regular file
    regular: list[str]
    nested_git: bool  # a folder below the top holds a `.git` (a folder or a file)
    hidden: list[bytes] = field(default_factory=list)  # every hidden folder (`.git` too)
    unwatched: int = 0  # folders no watch covers, or unreadable (rule_files' `changes`)


def rule_files(
    root: str, cache: dict[bytes, Listing], changes: FolderChanges | None = None
) -> RuleFiles:
    """The rule files under `root`; `cache` keeps each folder's listing by its mtime, so
    a second walk only stats the folders (for a search, thousands of folders a call:
    this loop is kept tight). With `changes`, a folder it watches is not even stat'ed
    (its caller drops from `cache` the folders that changed), and one it does not is
    watched before it is listed."""
    special_: list[tuple[str, str]] = []
    regular: list[str] = []
    hidden: list[bytes] = []
    nested = False
    unwatched = 0
    top = os.fsencode(root)
    stack = [top]
    pop, push, get, stat_ = stack.pop, stack.extend, cache.get, os.stat
    watched = changes.watched if changes is not None else {}
    while stack:
        folder = pop()
        cached = get(folder)
        if cached is None or folder not in watched:
            if changes is not None and not changes.watch(folder):
                unwatched += 1
            try:
                mtime = stat_(folder).st_mtime_ns
            except OSError:
                unwatched += 1  # tried again next time: a watch does not see it readable
                continue
            if cached is None or cached[0] != mtime:
                cached = _listing(folder, mtime)
                if cached is None:
                    unwatched += 1
                    continue
                cache[folder] = cached
        if cached[2]:
            special_ += cached[2]
        if cached[3]:
            regular += cached[3]
        if cached[4] and folder is not top:
            nested = True
        if cached[5]:
            hidden += cached[5]
        push(cached[1])
    return RuleFiles(special_, regular, nested, hidden, unwatched)


class WatchedRuleFiles:
    """`rule_files` of one folder, kept current by watching its folders (FolderChanges):
    while nothing changed in them, the last answer is the answer, without a walk."""

    def __init__(self, root: str) -> None:
        self.root = root
        self._cache: dict[bytes, Listing] = {}
        self._changes = FolderChanges.open()
        self._last: RuleFiles | None = None
        self._lock = threading.Lock()  # one walk at a time: each reads the changes once

    def current(self) -> RuleFiles:
        with self._lock:
            changes = self._changes
            if changes is None:
                return rule_files(self.root, self._cache)
            changed = changes.changed()
            if changed is None:  # events were lost: every listing is read again
                for folder in list(changes.watched):  # another tree's read may end some
                    self._cache.pop(folder, None)
            else:
                if not changed and self._last is not None and not self._last.unwatched:
                    return self._last
                for folder in changed:
                    self._cache.pop(folder, None)
            self._last = rule_files(self.root, self._cache, changes)
            return self._last

    def close(self) -> None:
        with self._lock:
            if self._changes is not None:
                self._changes.close()
                self._changes = None


def _listing(folder: bytes, mtime: int) -> Listing | None:
    subfolders: list[bytes] = []
    notes: list[tuple[str, str]] = []
    regular: list[str] = []
    hidden: list[bytes] = []
    git = False
    try:
        with os.scandir(folder) as scan:
            for entry in scan:
                if entry.name in _RULE_NAMES:
                    path = os.fsdecode(entry.path)
                    why = special(path)
                    if why is not None:
                        notes.append((path, why))
                    else:
                        regular.append(path)
                elif entry.name == b".git":
                    git = True
                    if entry.is_dir(follow_symlinks=False):
                        hidden.append(entry.path)
                elif entry.is_dir(follow_symlinks=False):
                    subfolders.append(entry.path)
                    if entry.name.startswith(b"."):
                        hidden.append(entry.path)
    except OSError:
        return None
    return (mtime, subfolders, notes, regular, git, hidden)
