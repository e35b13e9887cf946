"""Which files a worker's worktree changed against its base, as the board counts them:
commits, uncommitted edits and untracked files git does not ignore.

The same reading `read_agent` and closing use (`core.worktrees.risk.changed_files`), as
sorted paths; None when git cannot answer (the worktree is gone, git is missing or slow).
"""

from __future__ import annotations

from melgui.core.worktrees.git import GitError
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.risk import changed_files as changes_against_base


def changed_files(worktree: Worktree) -> list[str] | None:
    """Paths (relative to the worktree) that differ from `worktree.base`, sorted."""
    try:
        return sorted({change.path for change in changes_against_base(worktree)})
    except GitError:
        return None
