"""What a worker's own worktree is: the contract between creating one, reviewing its
changes, the worker pane and the agents board."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True, slots=True)
class Worktree:
    """A worker's git worktree, created outside the project tree.

    `base` is the commit the branch started from: the worker's changes are everything
    between it and the worktree's current state (commits and uncommitted edits).
    """

    path: Path  # the worktree folder
    branch: str  # the branch checked out there, e.g. "melgui/2-fix-parser"
    base: str  # full sha of the commit the branch was made from
    main: Path  # the project folder (the repository's main worktree)
