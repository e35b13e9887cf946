"""Undo: put back what a set of calls changed, never overwriting a later edit silently.

For each path the calls changed, the file should read as the last call left it. When it
does, it goes back to how it was before the first call; when it does not (the person's
editor, another agent), it is a conflict: its three versions (before, the agent's, now)
are shown and the person chooses per file. Nothing is lost either way: the restore is a
checkpoint of its own, so the version it replaced can be brought back.
"""

from __future__ import annotations

import contextlib
import os
import stat
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Literal

from melgui.core.store.checkpoints.changes import (
    EXECUTABLE,
    SYMLINK,
    FileChange,
    FileState,
    current_state,
)
from melgui.core.store.checkpoints.shadow import GitError, ShadowRepo

Choice = Literal["before", "agent", "now"]
CHOICES: tuple[Choice, ...] = ("before", "agent", "now")


@dataclass(frozen=True)
class PathPlan:
    """One path to put back: its version before the calls, after them, and now."""

    path: str
    before: FileState | None
    agent: FileState | None
    now: FileState | None

    @property
    def conflict(self) -> bool:
        return self.now != self.agent and self.now != self.before

    @property
    def settled(self) -> bool:
        """Already as it was before: nothing to do."""
        return self.now == self.before

    def target(self, choice: Choice) -> FileState | None:
        return {"before": self.before, "agent": self.agent, "now": self.now}[choice]


@dataclass(frozen=True)
class RestorePlan:
    paths: tuple[PathPlan, ...]
    linked: tuple[str, ...] = ()  # skipped: a folder on the way is a symbolic link now

    @property
    def conflicts(self) -> tuple[PathPlan, ...]:
        return tuple(p for p in self.paths if p.conflict)

    def targets(self, choices: Mapping[str, Choice]) -> dict[str, FileState | None]:
        """What each path becomes: clean ones go back; conflicts follow `choices`
        (a conflict without a choice keeps its current version)."""
        result: dict[str, FileState | None] = {}
        for plan in self.paths:
            if plan.settled:
                continue
            choice = choices.get(plan.path, "now" if plan.conflict else "before")
            if choice != "now":
                result[plan.path] = plan.target(choice)
        return result


def plan_undo(project: str, changesets: Iterable[tuple[FileChange, ...]]) -> RestorePlan:
    """The plan to undo these changes (oldest first): per path, first before, last after."""
    first: dict[str, FileState | None] = {}
    last: dict[str, FileState | None] = {}
    for files in changesets:
        for change in files:
            first.setdefault(change.path, change.before)
            last[change.path] = change.after
    linked = tuple(path for path in sorted(first) if linked_parent(project, path))
    paths = tuple(
        PathPlan(path, first[path], last[path], current_state(project, path))
        for path in sorted(first)
        if path not in linked
    )
    return RestorePlan(paths, linked)


def linked_parent(project: str, path: str) -> str | None:
    """The first folder on the way to `path` that is a symbolic link (or not a folder):
    a restore never reads, writes or deletes through it, since it may lead outside."""
    parts = path.split("/")[:-1]
    for i in range(1, len(parts) + 1):
        folder = "/".join(parts[:i])
        try:
            info = os.lstat(os.path.join(project, folder))
        except FileNotFoundError:
            return None  # missing from here on: made as real folders when written
        if not stat.S_ISDIR(info.st_mode):
            return folder
    return None


def describe_linked(project: str, paths: Iterable[str]) -> list[str]:
    """One line per path a restore left alone because of a linked folder."""
    lines = []
    for path in paths:
        folder = linked_parent(project, path) or os.path.dirname(path)
        lines.append(
            f"skipped {path}: {folder} is a symbolic link or not a folder now, and a restore "
            "never writes or deletes through one"
        )
    return lines


class UnsafePathError(ValueError):
    """A path outside the project or inside a `.git`: never written."""


async def apply_targets(repo: ShadowRepo, targets: Mapping[str, FileState | None]) -> list[str]:
    """Make each path read as its target state (None: absent). Deletions go first.
    Returns the paths left alone because a folder on their way is a link (or a file)."""
    project = repo.project
    for path in targets:
        _check(path)
    skipped: list[str] = []
    removals = sorted((p for p, t in targets.items() if t is None), reverse=True)
    for path in removals:
        if linked_parent(project, path) is not None:
            skipped.append(path)
            continue
        _remove(project, path)
    writes = []
    for path, target in sorted((p, t) for p, t in targets.items() if t is not None):
        if linked_parent(project, path) is not None:
            skipped.append(path)
        else:
            writes.append((path, target))
    contents = await read_blobs(repo, [state.blob for _, state in writes])
    for path, state in writes:
        _write(project, path, state, contents[state.blob])
    return skipped


async def read_blobs(repo: ShadowRepo, blobs: list[str]) -> dict[str, bytes]:
    """The contents of these blobs, read by one `git cat-file --batch`."""
    unique = sorted(set(blobs))
    if not unique:
        return {}
    out = await repo.run("cat-file", "--batch", stdin="".join(b + "\n" for b in unique).encode())
    contents: dict[str, bytes] = {}
    position = 0
    for blob in unique:
        end = out.index(b"\n", position)
        header = out[position:end].split()
        if len(header) != 3 or header[1] != b"blob":
            raise GitError(f"checkpoint data missing for {blob} (pruned or damaged)")
        size = int(header[2])
        contents[blob] = out[end + 1 : end + 1 + size]
        position = end + 1 + size + 1
    return contents


def _check(path: str) -> None:
    parts = path.split("/")
    if os.path.isabs(path) or ".." in parts or ".git" in parts or not path:
        raise UnsafePathError(f"refusing to write {path!r}")


def _remove(project: str, path: str) -> None:
    full = os.path.join(project, path)
    with contextlib.suppress(FileNotFoundError):
        info = os.lstat(full)
        if stat.S_ISDIR(info.st_mode):
            os.rmdir(full)  # only an empty folder; a full one is never removed here
        else:
            os.unlink(full)
    _prune_empty_parents(project, os.path.dirname(path))


def _prune_empty_parents(project: str, folder: str) -> None:
    while folder:
        try:
            os.rmdir(os.path.join(project, folder))
        except OSError:
            return
        folder = os.path.dirname(folder)


def _write(project: str, path: str, state: FileState, data: bytes) -> None:
    full = os.path.join(project, path)
    parent = os.path.dirname(full)
    _clear_file_ancestors(project, os.path.dirname(path))
    os.makedirs(parent, exist_ok=True)
    with contextlib.suppress(FileNotFoundError):
        if stat.S_ISDIR(os.lstat(full).st_mode):
            os.rmdir(full)
    temporary = os.path.join(parent, f".{os.path.basename(path)}.melgui-restore")
    with contextlib.suppress(FileNotFoundError):
        os.unlink(temporary)
    if state.mode == SYMLINK:
        os.symlink(os.fsdecode(data), temporary)
    else:
        with open(temporary, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, _permissions(full, state.mode == EXECUTABLE))
    os.replace(temporary, full)


def _permissions(full: str, executable: bool) -> int:
    """The file's own permission bits kept, with the execute bits git records."""
    try:
        info = os.lstat(full)
        base = stat.S_IMODE(info.st_mode) if stat.S_ISREG(info.st_mode) else 0o644
    except FileNotFoundError:
        base = 0o644
    return base | ((base & 0o444) >> 2) if executable else base & ~0o111


def _clear_file_ancestors(project: str, folder: str) -> None:
    """A file (or link) where a folder must be is in the way: it was part of the change."""
    parts = folder.split("/") if folder else []
    for i in range(1, len(parts) + 1):
        full = os.path.join(project, *parts[:i])
        with contextlib.suppress(FileNotFoundError):
            if not stat.S_ISDIR(os.lstat(full).st_mode):
                os.unlink(full)
