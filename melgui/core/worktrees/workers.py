"""Worker worktrees of one project folder, as its settings say: whether a worker gets one,
what is copied in, which setup command runs there, and which ones a crash left."""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from melgui.core.config.settings import Settings
from melgui.core.worktrees.cleanup import remove_worktree
from melgui.core.worktrees.create import Created, WorktreeError, create_worktree, repository_of
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.recovery import Found, orphans
from melgui.core.worktrees.risk import WorkAtRisk
from melgui.core.worktrees.setup_command import SetupResult, run_setup


@dataclass(frozen=True, slots=True)
class Prepared:
    """A new worker worktree, what went into it, and how its setup command went."""

    created: Created
    setup: SetupResult | None
    folder: Path  # where the worker works: the project's own place in the worktree

    @property
    def worktree(self) -> Worktree:
        return self.created.worktree

    def describe(self) -> str:
        lines = [
            f"It works in its own git worktree {self.folder} on branch {self.worktree.branch}."
        ]
        if self.created.copied:
            lines.append("Copied in: " + ", ".join(self.created.copied) + ".")
        if self.created.missing:
            lines.append("Not found to copy: " + ", ".join(self.created.missing) + ".")
        if self.created.carried:
            lines.append(f"Carried over {len(self.created.carried)} uncommitted file(s).")
        if self.setup is not None:
            lines.append(self.setup.describe())
        return "\n".join(lines)


def folder_in(worktree: Worktree, project: str | os.PathLike[str]) -> Path:
    """The worktree's counterpart of `project` (the project may be a repository's subfolder)."""
    relative = Path(os.path.realpath(project)).relative_to(os.path.realpath(worktree.main))
    return worktree.path / relative


class WorkerWorktrees:
    """The project's worker worktrees; `settings` is replaced when they change."""

    def __init__(self, folder: str, settings: Settings, *, root: Path | None = None) -> None:
        self.folder = folder
        self.settings = settings
        self.root = root  # None: melgui's data folder

    def available(self) -> bool:
        """The folder is in a git repository with at least one commit."""
        try:
            repository_of(self.folder)
        except WorktreeError:
            return False
        return True

    def wanted(self, choice: bool | None = None) -> bool:
        """Whether a new worker gets its own worktree: the person's choice for this worker
        (None: the setting), and only in a git repository."""
        own = self.settings.worker_worktrees if choice is None else choice
        return own and self.available()

    def copy_list(self) -> list[str]:
        return list(self.settings.worktree_copy.get(self.folder, []))

    def setup_command(self) -> str:
        return self.settings.worktree_setup.get(self.folder, "").strip()

    def create(self, pane_id: int, task: str, *, carry: bool | None = None) -> Prepared:
        """A worktree for worker `pane_id`, filled and set up (blocking: call it in a
        thread). WorktreeError says why it could not be made."""
        carry = self.settings.worker_carry_changes if carry is None else carry
        created = create_worktree(
            self.folder, pane_id, task, copy=self.copy_list(), carry=carry, root=self.root
        )
        folder = folder_in(created.worktree, self.folder)
        command = self.setup_command()
        setup = None
        if command:
            setup = run_setup(
                command, folder, created.worktree.main, timeout=self.settings.worktree_setup_timeout
            )
        return Prepared(created, setup, folder)

    def orphans(self, owned: Iterable[Path]) -> list[Found]:
        return orphans(self.folder, owned, root=self.root)

    def remove(self, worktree: Worktree, *, discard: bool = False) -> WorkAtRisk:
        return remove_worktree(worktree, discard=discard)
