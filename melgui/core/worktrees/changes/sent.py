"""A folder's uncommitted changes as a host sends them to a window elsewhere (a remote
folder's Changes view), and back:

    sent = changes_to_json(await read_changes(await uncommitted_in(folder)))   # the host
    changes = changes_from_json(sent)                                          # the window

`shown_digest(files)` names the files as a view read them, so a host acting on them
(worktree/apply) knows they are still what the person was shown.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from melgui.core.worktrees.changes.diff import FileChange, Hunk
from melgui.core.worktrees.changes.reading import Commit, WorktreeChanges
from melgui.core.worktrees.model import Worktree


def changes_to_json(changes: WorktreeChanges) -> dict[str, Any]:
    worktree = changes.worktree
    return {
        "worktree": {"path": str(worktree.path), "branch": worktree.branch,
                     "base": worktree.base, "main": str(worktree.main)},
        "commits": [dataclasses.asdict(commit) for commit in changes.commits],
        "files": [file_to_json(change) for change in changes.files],
        "uncommitted": list(changes.uncommitted),
        "left_out": changes.left_out,
    }  # fmt: skip


def changes_from_json(data: dict[str, Any]) -> WorktreeChanges:
    where = data["worktree"]
    worktree = Worktree(Path(where["path"]), str(where["branch"]), str(where["base"]),
                        Path(where["main"]))  # fmt: skip
    return WorktreeChanges(
        worktree=worktree,
        commits=tuple(Commit(**commit) for commit in data.get("commits") or []),
        files=tuple(file_from_json(change) for change in data.get("files") or []),
        uncommitted=tuple(str(path) for path in data.get("uncommitted") or []),
        left_out=int(data.get("left_out") or 0),
    )


def file_to_json(change: FileChange) -> dict[str, Any]:
    return dataclasses.asdict(change)


def shown_digest(files: Sequence[FileChange]) -> str:
    """The SHA-256 of `files` as sent: the same on both sides for the same changes."""
    text = json.dumps([file_to_json(change) for change in files], sort_keys=True)
    import hashlib  # OpenSSL's library: loaded when first used

    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()


def file_from_json(data: dict[str, Any]) -> FileChange:
    hunks = tuple(
        Hunk(
            str(h["header"]),
            int(h["old_start"]),
            int(h["old_count"]),
            int(h["new_start"]),
            int(h["new_count"]),
            tuple(str(line) for line in h["lines"]),
        )
        for h in data.get("hunks") or []
    )
    return FileChange(
        path=str(data["path"]),
        old_path=str(data["old_path"]),
        status=data["status"],
        binary=bool(data["binary"]),
        header=tuple(str(line) for line in data.get("header") or []),
        hunks=hunks,
        uncommitted=bool(data.get("uncommitted")),
    )
