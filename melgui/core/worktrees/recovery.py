"""Finding melgui's worktrees of a project: after a crash, the ones no pane owns.

`git worktree list --porcelain` of the project, kept to those in melgui's folder for this
project on a `melgui/` branch. Each comes back as a Worktree (its base from melgui's note,
else the merge base with the main folder's HEAD) so it can be reviewed or discarded.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from melgui.core.worktrees.git import GitError, head_sha, run_git, toplevel
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.naming import BRANCH_PREFIX, Note, project_folder_name, worktrees_root


@dataclass(frozen=True, slots=True)
class Found:
    worktree: Worktree
    task: str  # from melgui's note; "" when it is gone
    missing: bool  # the folder is gone (git lists it as prunable)

    def describe(self) -> str:
        what = f" — {self.task}" if self.task else ""
        gone = " (folder missing)" if self.missing else ""
        return f"{self.worktree.branch}{what}{gone}"


def _records(main: Path) -> list[dict[str, str]]:
    out = run_git(["worktree", "list", "--porcelain", "-z"], main)
    records: list[dict[str, str]] = []
    current: dict[str, str] = {}
    for field in out.split("\0"):
        if not field:
            if current:
                records.append(current)
            current = {}
            continue
        key, _, value = field.partition(" ")
        current[key] = value
    if current:
        records.append(current)
    return records


def _base(main: Path, folder: Path, branch: str, note: Note | None) -> str:
    if note is not None and note.branch == branch:
        return note.base
    try:
        return run_git(["merge-base", branch, "HEAD"], main).strip()
    except GitError:
        return head_sha(main) or ""


def melgui_worktrees(project: str | os.PathLike[str], *, root: Path | None = None) -> list[Found]:
    """melgui's worktrees of the repository holding `project` ([] when it has none)."""
    main = toplevel(project)
    if main is None:
        return []
    home = os.path.realpath((root or worktrees_root()) / project_folder_name(main))
    found: list[Found] = []
    for record in _records(main):
        path = record.get("worktree", "")
        ref = record.get("branch", "")
        branch = ref.removeprefix("refs/heads/")
        if not branch.startswith(BRANCH_PREFIX):
            continue
        if os.path.dirname(os.path.realpath(path)) != home:
            continue
        folder = Path(path)
        note = Note.read(folder)
        worktree = Worktree(folder, branch, _base(main, folder, branch, note), main)
        missing = "prunable" in record or not folder.is_dir()
        found.append(Found(worktree, note.task if note else "", missing))
    return found


def orphans(
    project: str | os.PathLike[str], owned: Iterable[Path], *, root: Path | None = None
) -> list[Found]:
    """melgui's worktrees of this project that no open pane owns."""
    taken = {os.path.realpath(path) for path in owned}
    return [
        f
        for f in melgui_worktrees(project, root=root)
        if os.path.realpath(f.worktree.path) not in taken
    ]
