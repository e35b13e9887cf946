"""Apply a worker's change (one hunk, one file, everything) to the main folder.

`git apply` of a generated patch, all or nothing: a change that does not fit the main
folder's files is refused with the reason. Where the person has uncommitted edits to the
files, a change clear of them is applied next to them; one that overlaps them is refused,
or, on explicit request, applied under them: their edits are stashed, the change applied,
and the stash popped back with git's three-way merge. Should that conflict, the file
keeps both sides between conflict marks and the stash is kept, and the person is told.
The person's edits are in the folder at the end of every path.
"""

from __future__ import annotations

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
        import hashlib  # OpenSSL's library: loaded when first used

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
            f"Not applied: the worker's change overlaps your uncommitted edits to {listed}. "
            "Apply can set your edits aside, apply the change and merge your edits back in "
            "(conflicts, if any, are marked in the file for you), or you can commit them first."
        )


@dataclass(frozen=True, slots=True)
class Applied:
    paths: tuple[str, ...]  # the main folder's files the change wrote
    stash: str = ""  # a stash kept for the person (their edits conflicted): its name
    what: str = ""  # "1 hunk of parser.py", "parser.py, README.md"
    kept: tuple[str, ...] = ()  # files where the person's uncommitted edits stay with it
    conflicts: tuple[str, ...] = ()  # files where their edits and the change conflict

    def describe(self, where: str = "the main folder") -> str:
        text = f"Applied to {where}: {self.what or ', '.join(self.paths)}."
        if self.conflicts:
            text += (
                f" It conflicts with your uncommitted edits to {_listed(self.conflicts)}: "
                "both are in the file between <<<<<<< and >>>>>>> marks (“Updated upstream” "
                "is the worker's, “Stashed changes” yours). Resolve them there; your edits "
                f"are also kept in the stash ({self.stash}) until you drop it."
            )
        elif self.kept:
            text += f" It went in next to your uncommitted edits to {_listed(self.kept)}, kept."
        return text


def _listed(paths: Sequence[str]) -> str:
    return ", ".join(paths[:8]) + (" …" if len(paths) > 8 else "")


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

    Files the person has uncommitted changes to (files left exactly as an earlier apply
    wrote them do not count) take the change next to those edits when it fits there;
    when it does not, DirtyMainFolder unless `stash`: then those files are stashed, the
    change applied, and the stash popped back (three-way); should the apply fail, the
    stash is popped before the error is raised.
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
        fits = await git(
            main, "apply", "--check", "--whitespace=nowarn", "-", stdin=patch, check=False
        )
        if fits.code != 0:
            if not stash:
                raise DirtyMainFolder(clash)
            stashed = await _stash(worktree, clash)
    result = await git(main, "apply", "--whitespace=nowarn", "-", stdin=patch, check=False)
    if result.code == 0:
        ledger.record(main, [path for path in paths if path not in clash])
        conflicts = await _put_back(main, paths, stashed) if stashed else ()
        return Applied(
            tuple(paths),
            stashed if conflicts else "",
            _what(parts),
            kept=tuple(clash),
            conflicts=conflicts,
        )
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


async def _put_back(main: Path, paths: Sequence[str], stashed: str) -> tuple[str, ...]:
    """Pop the person's stashed edits over the applied change with git's three-way merge
    (the change is staged first, so git merges rather than refuses); the files left in
    conflict, the stash kept for them. ChangesError, naming the stash, if git cannot."""
    specs = [f":(literal){path}" for path in paths]
    await git(main, "add", "-A", "--", *specs)
    popped = await git(main, "stash", "pop", check=False)
    unmerged = await git(
        main, "diff", "--name-only", "--diff-filter=U", "-z", read_only=True, check=False
    )
    conflicts = tuple(sorted(path for path in unmerged.text.split("\0") if path))
    if popped.code == 0:
        await git(main, "reset", "-q", "--", *specs)
        return ()
    if conflicts:
        return conflicts
    raise ChangesError(
        "Applied, but your edits could not be put back over it: "
        f"{last_words(popped)}. They are in the stash ({stashed}): run git stash pop in "
        "the main folder to get them back."
    )


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
