"""Removing a worker's worktree without losing work.

Removal refuses while the worktree holds work (see `risk`) unless the person confirmed
discarding it. The branch goes with it only when it is merged into the main folder's
HEAD, or discarded.
"""

from __future__ import annotations

from melgui.core.worktrees.create import WorktreeError
from melgui.core.worktrees.git import GitError, admin_lock, run_git
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.naming import Note
from melgui.core.worktrees.risk import WorkAtRisk, work_at_risk


class WorkAtRiskError(WorktreeError):
    """The worktree holds work; removing it needs the person's confirmation."""

    def __init__(self, worktree: Worktree, risk: WorkAtRisk) -> None:
        super().__init__(
            f"{worktree.path} (branch {worktree.branch}) still holds work: {risk.describe()}. "
            "Merge or discard it first."
        )
        self.risk = risk


def remove_worktree(worktree: Worktree, *, discard: bool = False) -> WorkAtRisk:
    """Remove the worktree and its branch; returns what was discarded (empty when none).

    Raises WorkAtRiskError when it holds work and `discard` is False, WorktreeError when
    git refuses.
    """
    try:
        risk = work_at_risk(worktree)
        if not risk.empty and not discard:
            raise WorkAtRiskError(worktree, risk)
        with admin_lock(worktree.main):  # an add beside it reads the records it deletes
            if risk.folder_missing:
                _forget_missing(worktree)
            else:
                force = ["--force"] if not risk.empty else []
                run_git(["worktree", "remove", *force, str(worktree.path)], worktree.main)
        if run_git(["branch", "--list", worktree.branch], worktree.main).strip():
            run_git(["branch", "-D" if risk.unmerged else "-d", worktree.branch], worktree.main)
    except GitError as exc:
        raise WorktreeError(f"Could not remove the worktree: {exc}") from exc
    Note.path_for(worktree.path).unlink(missing_ok=True)
    return risk


def _forget_missing(worktree: Worktree) -> None:
    """Drop git's record of a worktree whose folder is gone (only this one: a plain
    `git worktree prune` would also drop other tools' records)."""
    out = run_git(["worktree", "list", "--porcelain", "-z"], worktree.main)
    if f"worktree {worktree.path}\0" not in out:
        return
    run_git(["worktree", "remove", "--force", str(worktree.path)], worktree.main)
