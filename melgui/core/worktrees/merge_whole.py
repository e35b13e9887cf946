"""Merge a worker's branch whole or not at all: what a host does for a window elsewhere.

A merge on another machine cannot leave conflicts for the person to resolve in the
window (the files are there), so a merge that would stop on conflicts is undone at once:
`git merge --abort` puts the folder back (its uncommitted edits with it), and the
commit of the worker's loose edits made for the merge is taken back off the branch, the
edits staying in its worktree as they were. The same when the merge went in but the
person's uncommitted edits there conflict with it when put back: the merge is undone and
the edits put back as they were before it.
"""

from __future__ import annotations

from melgui.core.worktrees.changes.git import ChangesError, git
from melgui.core.worktrees.merge import (
    MergeOutcome,
    UncommittedWork,
    commit_worktree,
    merge_branch,
    merge_state,
)
from melgui.core.worktrees.model import Worktree


async def merge_whole(worktree: Worktree, commit: str | None = None) -> MergeOutcome:
    """Merge `worktree.branch` into its main folder's current branch, first committing the
    worker's loose edits as `commit` (None: they stop the merge, UncommittedWork). On a
    conflict, nothing changes (outcome not merged, the conflicted files named); ChangesError
    when git refuses to start, in git's words."""
    before = await git(worktree.path, "rev-parse", "HEAD", read_only=True)
    committed = False
    if commit is not None and (await _loose(worktree)):
        await commit_worktree(worktree, commit)
        committed = True
    try:
        outcome = await merge_branch(worktree)
    except (UncommittedWork, ChangesError):
        await _uncommit(worktree, committed, before.text.strip())
        raise
    if outcome.merged and not outcome.conflicts:
        return outcome
    into = (await merge_state(worktree.main)).branch or "the detached HEAD"
    if outcome.merged:  # the person's edits there conflict with the merge when put back
        await _unmerge_keeping_edits(worktree)
        why = "your uncommitted edits there conflict with it"
    else:
        await git(worktree.main, "merge", "--abort")
        why = "it conflicts"
    await _uncommit(worktree, committed, before.text.strip())
    files = ", ".join(outcome.conflicts)
    count = len(outcome.conflicts)
    return MergeOutcome(
        False,
        outcome.conflicts,
        f"Not merged: {why} in {count} file{'s' if count != 1 else ''} ({files}). Nothing "
        f"changed: {worktree.main} and {worktree.branch} are as they were. Merge it there "
        f"yourself (git merge {worktree.branch} in {worktree.main} on {into}) to resolve "
        "the conflicts, or have the worker rebase its branch first.",
    )


async def _loose(worktree: Worktree) -> bool:
    status = await git(worktree.path, "status", "--porcelain", "-z", read_only=True)
    return bool(status.text.strip("\0"))


async def _uncommit(worktree: Worktree, committed: bool, before: str) -> None:
    """Take the commit made for the merge back off the branch; its edits stay loose."""
    if committed:
        await git(worktree.path, "reset", "-q", before)


async def _unmerge_keeping_edits(worktree: Worktree) -> None:
    """The merge went in, but putting the person's edits back over it conflicted (git kept
    them in the stash): back to the commit before it, and the edits back from the stash."""
    await git(worktree.main, "reset", "--hard", "-q", "ORIG_HEAD")
    await git(worktree.main, "stash", "pop", "-q")
