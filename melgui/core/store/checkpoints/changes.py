"""What a call changed: the difference of two snapshots, file by file, and the tree now.

A FileChange names a path with its mode and blob before and after (`None` when the
file did not exist). `current_state` reads a file of the project as git would store it,
so "has it changed since?" is an exact comparison of blob ids, not of times.
"""

from __future__ import annotations

import os
import stat
from dataclasses import asdict, dataclass
from typing import Any

from melgui.core.store.checkpoints.shadow import ShadowRepo

SYMLINK = "120000"
EXECUTABLE = "100755"
REGULAR = "100644"
ZERO = "0" * 40


@dataclass(frozen=True)
class FileState:
    mode: str
    blob: str


@dataclass(frozen=True)
class FileChange:
    """One path a call created ("A"), deleted ("D") or modified ("M", contents or mode)."""

    path: str
    status: str
    before: FileState | None
    after: FileState | None

    def to_json(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> FileChange:
        def state(value: Any) -> FileState | None:
            return FileState(**value) if value else None

        return cls(data["path"], data["status"], state(data["before"]), state(data["after"]))


async def tree_changes(repo: ShadowRepo, before: str, after: str) -> list[FileChange]:
    """Every file that differs between two snapshots, sorted by path."""
    if before == after:
        return []
    out = await repo.run("diff-tree", "-r", "-z", "--no-renames", "--no-commit-id", before, after)
    parts = out.split(b"\0")
    changes: list[FileChange] = []
    i = 0
    while i + 1 < len(parts) and parts[i]:
        old_mode, new_mode, old_blob, new_blob, status = parts[i].decode().lstrip(":").split()
        path = parts[i + 1].decode("utf-8", "surrogateescape")
        i += 2
        changes.append(
            FileChange(
                path,
                status[:1] if status[:1] in "ADM" else "M",
                None if old_blob == ZERO else FileState(old_mode, old_blob),
                None if new_blob == ZERO else FileState(new_mode, new_blob),
            )
        )
    return sorted(changes, key=lambda change: change.path)


def current_state(project: str, path: str) -> FileState | None:
    """The file at `path` now, as git would store it; None when absent (or a folder)."""
    full = os.path.join(project, path)
    try:
        info = os.lstat(full)
    except OSError:
        return None
    if stat.S_ISLNK(info.st_mode):
        data = os.fsencode(os.readlink(full))
        return FileState(SYMLINK, blob_id(data))
    if not stat.S_ISREG(info.st_mode):
        return None
    with open(full, "rb") as handle:
        data = handle.read()
    mode = EXECUTABLE if info.st_mode & stat.S_IXUSR else REGULAR
    return FileState(mode, blob_id(data))


def blob_id(data: bytes) -> str:
    import hashlib  # OpenSSL's library: loaded when first used

    return hashlib.sha1(b"blob %d\0" % len(data) + data, usedforsecurity=False).hexdigest()
