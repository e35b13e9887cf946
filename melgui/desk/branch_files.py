"""Which files a worker's worktree changed against its base: commits and uncommitted edits.

Reads only (`git diff --name-only <base>` and the untracked files git does not ignore);
None when git cannot answer (the worktree is gone, git is missing or too slow).
"""

from __future__ import annotations

import subprocess

from melgui.core.processes import reset_signals
from melgui.core.worktrees.model import Worktree

GIT_TIMEOUT_S = 10.0


def _git(worktree: Worktree, *args: str) -> list[str] | None:
    try:
        done = subprocess.run(
            ["git", "-C", str(worktree.path), *args],
            capture_output=True,
            text=True,
            timeout=GIT_TIMEOUT_S,
            preexec_fn=reset_signals,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [line for line in done.stdout.splitlines() if line]


def changed_files(worktree: Worktree) -> list[str] | None:
    """Paths (relative to the worktree) that differ from `worktree.base`, sorted."""
    tracked = _git(worktree, "diff", "--name-only", "--no-renames", worktree.base, "--")
    untracked = _git(worktree, "ls-files", "--others", "--exclude-standard")
    if tracked is None or untracked is None:
        return None
    return sorted(set(tracked) | set(untracked))
