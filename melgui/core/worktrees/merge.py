"""Merge a worker's branch into the main folder's current branch, abort a stopped merge,
commit the worker's loose edits, or discard everything the worker did.

A merge that stops on conflicts is left exactly as git leaves it: the conflicted files
are listed for the person, who resolves and commits, or aborts. Nothing is resolved here.
Uncommitted edits in the main folder do not stop a merge: git sets them aside and puts
them back over it (`--autostash`), and new files an earlier apply wrote, which the merge
brings as they are, make way for it.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from melgui.core.worktrees.changes.apply import LEDGER, AppliedLedger
from melgui.core.worktrees.changes.git import ChangesError, dirty_paths, git, last_words
from melgui.core.worktrees.model import Worktree


class UncommittedWork(ChangesError):
    """The worktree has edits that are not committed, so merging would leave them out."""

    def __init__(self, paths: Sequence[str]) -> None:
        self.paths = tuple(paths)
        listed = ", ".join(self.paths[:8]) + (" …" if len(self.paths) > 8 else "")
        super().__init__(
            f"The worker has uncommitted edits to {listed}. A merge takes only commits: "
            "commit them in the worktree first (Merge can commit them for you), or apply "
            "them as files instead."
        )


@dataclass(frozen=True, slots=True)
class MergeState:
    """The main folder's side of a merge."""

    branch: str  # its current branch ("" when HEAD is detached)
    merging: bool  # a merge stopped there and waits for the person
    conflicts: tuple[str, ...]  # files still in conflict


@dataclass(frozen=True, slots=True)
class MergeOutcome:
    merged: bool
    conflicts: tuple[str, ...]
    message: str


async def merge_state(main: Path) -> MergeState:
    head = await git(main, "symbolic-ref", "--short", "-q", "HEAD", read_only=True, check=False)
    merging = await git(
        main, "rev-parse", "-q", "--verify", "MERGE_HEAD", read_only=True, check=False
    )
    conflicts = await git(
        main, "diff", "--name-only", "--diff-filter=U", "-z", read_only=True, check=False
    )
    return MergeState(
        branch=head.text.strip() if head.code == 0 else "",
        merging=merging.code == 0,
        conflicts=tuple(sorted(path for path in conflicts.text.split("\0") if path)),
    )


async def merge_branch(worktree: Worktree, *, ledger: AppliedLedger = LEDGER) -> MergeOutcome:
    """Merge `worktree.branch` into the main folder's current branch.

    UncommittedWork when the worktree has uncommitted edits; ChangesError when there is
    nothing to merge or git refuses to start (a merge already stopped there, uncommitted
    changes in the main folder the merge would overwrite: git's list is in the message).
    On conflicts, returns them with the merge left in progress.
    """
    dirty = await dirty_paths(worktree.path)
    if dirty:
        raise UncommittedWork(sorted(dirty))
    before = await merge_state(worktree.main)
    if before.merging:
        raise ChangesError(
            "The main folder is in the middle of a merge already: resolve its conflicts and "
            "commit, or abort that merge first."
        )
    ahead = await git(
        worktree.main, "rev-list", "--count", f"HEAD..{worktree.branch}", read_only=True
    )
    if ahead.text.strip() == "0":
        raise ChangesError(
            f"Nothing to merge: the main folder's {before.branch or 'HEAD'} already has every "
            f"commit of {worktree.branch}."
        )
    into = before.branch or "the detached HEAD"
    await _clear_applied_new_files(worktree, ledger)
    result = await git(
        worktree.main,
        "merge",
        "--autostash",
        "--no-edit",
        "-m",
        f"Merge {worktree.branch} (a worker's changes)",
        worktree.branch,
        check=False,
    )
    if result.code == 0:
        message = f"Merged {worktree.branch} into {into}."
        if "autostash resulted in conflicts" in result.err + result.text:
            after = await merge_state(worktree.main)
            message += (
                f" Your uncommitted edits conflict with it in {', '.join(after.conflicts)}: "
                "both are in the file between <<<<<<< and >>>>>>> marks. Resolve them there; "
                "your edits are also kept in the stash (git stash list) until you drop it."
            )
            return MergeOutcome(True, after.conflicts, message)
        return MergeOutcome(True, (), message)
    after = await merge_state(worktree.main)
    if after.merging:
        count = len(after.conflicts)
        return MergeOutcome(
            False,
            after.conflicts,
            f"The merge of {worktree.branch} into {into} stopped with conflicts in {count} "
            f"file{'s' if count != 1 else ''}. They are left as git marks them: resolve them "
            "in the main folder and commit, or abort the merge.",
        )
    raise ChangesError(_refusal(result.err, worktree.branch))


async def _clear_applied_new_files(worktree: Worktree, ledger: AppliedLedger) -> None:
    """Remove untracked files an earlier apply wrote and nobody changed since, when the
    branch has them exactly so: the merge writes them again, and git would refuse to
    overwrite them."""
    dirty = await dirty_paths(worktree.main)
    for path, status in dirty.items():
        if status != "??" or not ledger.ours(worktree.main, path):
            continue
        theirs = await git(
            worktree.main, "show", f"{worktree.branch}:{path}", read_only=True, check=False
        )
        file = worktree.main / path
        if theirs.code == 0 and not file.is_symlink() and file.read_bytes() == theirs.out:
            file.unlink()


def _refusal(err: str, branch: str) -> str:
    files = [line.strip() for line in err.splitlines() if line.startswith("\t")]
    if files and "overwritten by merge" in err:
        return (
            f"Not merged: the main folder has uncommitted changes to {', '.join(files)}, "
            f"which the merge of {branch} would overwrite. Commit or stash them first."
        )
    if "untracked working tree files would be overwritten" in err and files:
        return (
            f"Not merged: the main folder has untracked files {', '.join(files)} where the "
            f"merge of {branch} would write. Move or commit them first."
        )
    if "Please tell me who you are" in err or "user.email" in err:
        return (
            "Not merged: git does not know who you are, so it cannot write the merge commit. "
            'Set it with: git config --global user.name "Your Name" and '
            'git config --global user.email "you@example.com".'
        )
    words = " ".join(line.strip() for line in err.splitlines() if line.strip())
    return f"Not merged: git refused the merge of {branch}: {words}"


async def abort_merge(main: Path) -> None:
    """Undo a merge that stopped on conflicts (`git merge --abort`)."""
    state = await merge_state(main)
    if not state.merging:
        raise ChangesError("There is no merge in progress in the main folder to abort.")
    await git(main, "merge", "--abort")


async def commit_worktree(worktree: Worktree, message: str) -> str:
    """Commit every edit in the worktree (new files included); returns the short sha."""
    await git(worktree.path, "add", "-A", "--", ".")
    result = await git(worktree.path, "commit", "--no-verify", "-q", "-m", message, check=False)
    if result.code != 0:
        if "Please tell me who you are" in result.err:
            raise ChangesError(
                "Not committed: git does not know who you are. Set user.name and user.email "
                "with git config --global."
            )
        raise ChangesError(f"Not committed: {last_words(result)}")
    sha = await git(worktree.path, "rev-parse", "--short", "HEAD", read_only=True)
    return sha.text.strip()


async def discard(worktree: Worktree) -> None:
    """Put the worktree back at its base: commits dropped from the branch, edits and new
    files removed (ignored files, such as a copied `.env`, stay)."""
    head = await git(worktree.path, "symbolic-ref", "--short", "-q", "HEAD", check=False)
    if head.text.strip() != worktree.branch:
        raise ChangesError(
            f"Not discarded: the worktree has {head.text.strip() or 'a detached HEAD'} checked "
            f"out, not the worker's branch {worktree.branch}."
        )
    await git(worktree.path, "reset", "--hard", "-q", worktree.base)
    await git(worktree.path, "clean", "-f", "-d", "-q")
