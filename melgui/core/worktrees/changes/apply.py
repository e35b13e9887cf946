"""Apply a worker's change (one hunk, one file, everything) to the main folder.

`git apply` of a generated patch, all or nothing, no three-way merge: a change that does
not fit the main folder's files is refused with the reason. Files the person has edited
and not committed are never mixed with the worker's edits: the apply is refused, or, on
explicit request, those files are stashed first (and the stash kept for the person).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from melgui.core.worktrees.changes.diff import FileChange, patch_of
from melgui.core.worktrees.changes.git import ChangesError, dirty_paths, git, last_words
from melgui.core.worktrees.changes.landed import hunks_in_main
from melgui.core.worktrees.changes.reading import WorktreeChanges
from melgui.core.worktrees.model import Worktree


class AppliedLedger:
    """What melgui itself last wrote to each main-folder file by applying.

    A file whose uncommitted state is exactly what an earlier apply left holds no edits
    of the person's, so applying the next hunk of it is not refused. Any other change
    to it (the person's editor, a command) makes it the person's again.
    """

    def __init__(self) -> None:
        self._left: dict[tuple[str, str], str] = {}

    def record(self, main: Path, paths: Sequence[str]) -> None:
        for path in paths:
            self._left[(str(main), path)] = _fingerprint(main / path)

    def ours(self, main: Path, path: str) -> bool:
        left = self._left.get((str(main), path))
        return left is not None and left == _fingerprint(main / path)


def _fingerprint(path: Path) -> str:
    try:
        if path.is_symlink():
            return "link:" + os.readlink(path)
        return "file:" + hashlib.sha256(path.read_bytes()).hexdigest() + f":{path.stat().st_mode}"
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        return f"unreadable:{exc}"


LEDGER = AppliedLedger()  # one per process: every Changes view of a main folder shares it

# A part to apply: a file's change and which of its hunks (None: the whole file).
Part = tuple[FileChange, Sequence[int] | None]


class DirtyMainFolder(ChangesError):
    """The main folder has uncommitted changes to files the change touches."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        listed = ", ".join(self.paths[:8]) + (" …" if len(self.paths) > 8 else "")
        super().__init__(
            f"Not applied: the main folder has uncommitted changes to {listed}. Applying "
            "there would mix the worker's edits with yours. Commit them, or stash them "
            "first (Apply can stash them for you and keep the stash)."
        )


@dataclass(frozen=True, slots=True)
class Applied:
    paths: tuple[str, ...]  # the main folder's files the change wrote
    stash: str = ""  # when the person's edits were stashed first: the stash's message
    what: str = ""  # "1 hunk of parser.py", "parser.py, README.md"

    def describe(self) -> str:
        text = f"Applied to the main folder: {self.what or ', '.join(self.paths)}."
        if self.stash:
            text += f" Your uncommitted edits to those files are kept in the stash ({self.stash})."
        return text


async def apply_hunk(
    worktree: Worktree, change: FileChange, hunk: int, *, stash: bool = False
) -> Applied:
    return await apply_parts(worktree, [(change, [hunk])], stash=stash)


async def apply_file(worktree: Worktree, change: FileChange, *, stash: bool = False) -> Applied:
    """Apply what of `change` the main folder does not have yet."""
    return await apply_parts(worktree, await still_to_apply(worktree, [change]), stash=stash)


async def apply_all(
    worktree: Worktree, changes: WorktreeChanges, *, stash: bool = False
) -> Applied:
    """Apply every file's change the main folder does not have yet."""
    if not changes.files:
        raise ChangesError("Nothing to apply: the worktree has no changes against its base.")
    parts = await still_to_apply(worktree, changes.files)
    return await apply_parts(worktree, parts, stash=stash)


async def still_to_apply(worktree: Worktree, files: Sequence[FileChange]) -> list[Part]:
    """The parts of `files` not in the main folder yet: hunks already there (applied
    one by one before) are left out, and so are files that are there whole.
    ChangesError when nothing is left."""
    parts: list[Part] = []
    for change in files:
        if change.binary or change.status == "renamed" or not change.hunks:
            parts.append((change, None))  # applied whole, or git says why not
            continue
        landed = await hunks_in_main(worktree, change)
        left = [index for index in range(len(change.hunks)) if index not in landed]
        if left:
            parts.append((change, None if not landed else left))
    if not parts:
        where = files[0].path if len(files) == 1 else "every change"
        raise ChangesError(f"Nothing to apply: the main folder has {where} already.")
    return parts


async def apply_parts(
    worktree: Worktree,
    parts: Sequence[Part],
    *,
    stash: bool = False,
    ledger: AppliedLedger = LEDGER,
) -> Applied:
    """Apply every part in one `git apply` (all or nothing) in the main folder.

    DirtyMainFolder when the person has uncommitted changes to any touched file (files
    left exactly as an earlier apply wrote them do not count) and `stash` is False; with
    `stash`, those files are stashed first and, should the apply fail, restored from the
    stash before the error is raised.
    """
    main = worktree.main
    for change, hunks in parts:
        whole = hunks is None or set(hunks) == set(range(len(change.hunks)))
        if change.status == "renamed" and not whole:
            raise ChangesError(
                f"{change.old_path} was renamed to {change.path}: a rename is applied "
                "whole (Apply file), not hunk by hunk."
            )
    patch = "".join(patch_of(change, hunks) for change, hunks in parts).encode(
        "utf-8", "surrogateescape"
    )
    paths: list[str] = []
    for change, _hunks in parts:
        paths.extend(path for path in change.paths if path not in paths)
    dirty = await dirty_paths(main)
    clash = sorted(path for path in paths if path in dirty and not ledger.ours(main, path))
    stashed = ""
    if clash:
        if not stash:
            raise DirtyMainFolder(clash)
        stashed = await _stash(worktree, clash)
    result = await git(main, "apply", "--whitespace=nowarn", "-", stdin=patch, check=False)
    if result.code == 0:
        ledger.record(main, paths)
        return Applied(tuple(paths), stashed, _what(parts))
    reason = await _why_not(main, patch, paths, result.err or last_words(result))
    if stashed:
        await git(main, "stash", "pop", "--index")
        reason += " Your stashed edits were put back."
    raise ChangesError(reason)


def _what(parts: Sequence[Part]) -> str:
    named: list[str] = []
    for change, hunks in parts:
        if hunks is None:
            named.append(change.path)
        else:
            count = len(set(hunks))
            named.append(f"{count} hunk{'s' if count != 1 else ''} of {change.path}")
    return ", ".join(named[:8]) + (f" and {len(named) - 8} more files" if len(named) > 8 else "")


async def _stash(worktree: Worktree, paths: Sequence[str]) -> str:
    message = f"melgui: your edits before applying {worktree.branch}"
    specs = [f":(literal){path}" for path in paths]
    await git(worktree.main, "stash", "push", "--include-untracked", "-m", message, "--", *specs)
    return f"stash@{{0}}: {message}"


async def _why_not(main: Path, patch: bytes, paths: Sequence[str], err: str) -> str:
    reverse = await git(main, "apply", "--check", "--reverse", "-", stdin=patch, check=False)
    if reverse.code == 0:
        return f"Not applied: the main folder already has this change ({', '.join(paths)})."
    words = " ".join(line.strip() for line in err.splitlines() if line.strip())
    return (
        "Not applied: the change does not fit the main folder's version of "
        f"{', '.join(paths)} (it differs from the worker's base there). Merge the branch "
        f"instead, or copy the change by hand. git said: {words}"
    )
