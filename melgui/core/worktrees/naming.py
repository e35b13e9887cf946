"""Where a worker's worktree goes and what its branch is called.

Worktrees live in melgui's data folder, never inside the project (so the main agent's
search does not see them): `<data>/worktrees/<project>-<hash>/<pane>-<task-slug>`, on
branch `melgui/<pane>-<task-slug>`. A small JSON note beside each folder keeps what git
does not (the base commit, the task), so a worktree found after a crash can be reviewed
against the right base.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path

from melgui.core.config.settings import data_dir
from melgui.core.config.trust import worktree_group_name

BRANCH_PREFIX = "melgui/"
SLUG_WORDS = 5
SLUG_CHARS = 40


def worktrees_root() -> Path:
    """Every project's worker worktrees, under melgui's data folder."""
    return data_dir() / "worktrees"


def project_folder_name(main: Path) -> str:
    """`<name>-<hash>` of the project's real path: readable, and unique per project (the
    trust store finds a worktree's project by the same name)."""
    return worktree_group_name(main)


def slug(task: str) -> str:
    """A branch-safe slug of the task's first words: "Fix the parser!" -> "fix-the-parser"."""
    words = re.findall(r"[a-z0-9]+", task.lower())[:SLUG_WORDS]
    text = "-".join(words)[:SLUG_CHARS].strip("-")
    return text or "task"


@dataclass(frozen=True, slots=True)
class Note:
    """What melgui keeps beside a worktree folder (`<folder>.json`)."""

    base: str
    branch: str
    task: str

    @staticmethod
    def path_for(folder: Path) -> Path:
        return folder.with_name(folder.name + ".json")

    def write(self, folder: Path) -> None:
        data = {"base": self.base, "branch": self.branch, "task": self.task}
        Note.path_for(folder).write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")

    @staticmethod
    def read(folder: Path) -> Note | None:
        try:
            data = json.loads(Note.path_for(folder).read_text(encoding="utf-8"))
            return Note(str(data["base"]), str(data["branch"]), str(data.get("task", "")))
        except (OSError, ValueError, KeyError, TypeError):
            return None
