"""Discard part of a worker's change in its worktree: one hunk, or one file.

The part's patch (base → worktree, as the Changes view shows it) is applied in reverse
to the worktree's files: the lines, or the whole file, go back to the base version; a
new file the worker made is deleted, a file it deleted comes back. All or nothing: a
file that changed since the view read it is refused and left as it is. Only the
worktree's files are written (no index, no commit): where the worker had committed the
change, its reversal stays as an uncommitted edit on the branch.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from melgui.core.worktrees.changes.diff import FileChange, patch_of
from melgui.core.worktrees.changes.git import ChangesError, git
from melgui.core.worktrees.model import Worktree


@dataclass(frozen=True, slots=True)
class Discarded:
    what: str  # "1 hunk of numbers.txt", "the new file added.py"

    def describe(self) -> str:
        return f"Discarded in the worker's worktree: {self.what}."


def describe_part(change: FileChange, hunks: Sequence[int] | None) -> str:
    """What discarding this part loses, for the question asked before it."""
    if hunks is not None:
        chosen = [change.hunks[i] for i in sorted(set(hunks))]
        added = sum(hunk.added for hunk in chosen)
        removed = sum(hunk.removed for hunk in chosen)
        count = len(chosen)
        lines = f"{count} hunk{'s' if count != 1 else ''} of {change.path} (+{added} −{removed})"
        return f"{lines}: those lines go back to what they were at the base"
    if change.status == "added":
        return f"the new file {change.path}: it is deleted from the worktree"
    if change.status == "deleted":
        return f"the deletion of {change.path}: the file comes back as it was at the base"
    if change.status == "renamed":
        return f"the rename of {change.old_path} to {change.path}: it goes back to its old name"
    counts = f"+{change.added} −{change.removed}"
    return f"every change to {change.path} ({counts}): the file goes back to its base version"


async def discard_part(
    worktree: Worktree, change: FileChange, hunks: Sequence[int] | None = None
) -> Discarded:
    """Undo `change` (or only the hunks at these indexes) in the worktree's files.

    ChangesError when the file no longer holds the change as it was read (refresh and
    look again) or a rename is asked to be discarded hunk by hunk.
    """
    whole = hunks is None or set(hunks) == set(range(len(change.hunks)))
    if hunks is not None and (change.binary or (change.status == "renamed" and not whole)):
        raise ChangesError(f"{change.path} is discarded whole (Discard file), not hunk by hunk.")
    if hunks is not None and not hunks:
        raise ChangesError(f"No hunk of {change.path} was chosen: nothing discarded.")
    patch = patch_of(change, None if whole else hunks).encode("utf-8", "surrogateescape")
    result = await git(
        worktree.path, "apply", "--reverse", "--whitespace=nowarn", "-", stdin=patch, check=False
    )
    if result.code != 0:
        words = " ".join(line.strip() for line in result.err.splitlines() if line.strip())
        raise ChangesError(
            f"Not discarded: {change.path} in the worktree is no longer as shown (the worker "
            f"may have changed it since). Refresh and look again. git said: {words}"
        )
    return Discarded(_what(change, None if whole else hunks))


def _what(change: FileChange, hunks: Sequence[int] | None) -> str:
    if hunks is not None:
        count = len(set(hunks))
        return f"{count} hunk{'s' if count != 1 else ''} of {change.path}"
    if change.status == "added":
        return f"the new file {change.path}"
    return f"the change to {change.path}"
