"""Creating a worker's worktree: a new branch at HEAD, in a folder outside the project.

Only `git worktree add` writes to the project's `.git`. Ignored files a worktree lacks
(`.env`, a virtual environment) come from the project's copy list; the main folder's
uncommitted changes can be carried over: its diff against HEAD is applied to the new
folder's files and its untracked files copied, leaving the main folder and its index as
they were.
"""

from __future__ import annotations

import contextlib
import os
import shutil
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from melgui.core.worktrees.git import (
    GitError,
    admin_lock,
    run_git,
    run_git_bytes,
    toplevel_and_head,
)
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.naming import (
    BRANCH_PREFIX,
    Note,
    project_folder_name,
    slug,
    worktrees_root,
)


class WorktreeError(Exception):
    """A worktree could not be made or removed; the message is for people."""


@dataclass(frozen=True, slots=True)
class Created:
    worktree: Worktree
    copied: list[str] = field(default_factory=list)  # copy-list entries copied in
    missing: list[str] = field(default_factory=list)  # copy-list entries that matched nothing
    carried: list[str] = field(default_factory=list)  # files carried over from the main folder


def repository_of(project: str | os.PathLike[str], *, nice: bool = True) -> tuple[Path, str]:
    """The repository's main folder and HEAD sha; WorktreeError when there is none to use."""
    top, base = toplevel_and_head(project, nice=nice)
    if top is None:
        raise WorktreeError(f"{project} is not in a git repository.")
    if base is None:
        raise WorktreeError(f"The git repository at {top} has no commit yet.")
    return top, base


def _branch_exists(main: Path, branch: str) -> bool:
    out = run_git(["branch", "--list", branch], main, nice=False)
    return bool(out.strip())


def _add_worktree(main: Path, home: Path, stem: str, base: str) -> str:
    """`git worktree add` on a new branch under the first free name (`stem`, `stem-2`, …);
    returns the name. A folder in the way is seen before git runs; a branch of that name
    only when `worktree add` refuses, so the usual creation is one git call. One creation
    at a time per repository (`admin_lock`): eight at once raced in git."""
    with admin_lock(main):
        return _add_free(main, home, stem, base)


def _add_free(main: Path, home: Path, stem: str, base: str) -> str:
    name = stem
    number = 1
    while True:
        folder = home / name
        if not folder.exists():
            branch = BRANCH_PREFIX + name
            try:
                # Niced, though a person waits on it: eight checkouts of a large tree at
                # once (an orchestrator starting its workers) took the cores from the
                # window drawing their panes (stalls of 0.7-1.7 s opening 8 workers at a
                # load of 10, 59-73 ms niced); on a quiet machine it costs nothing.
                run_git(
                    ["worktree", "add", "--quiet", "-b", branch, str(folder), base],
                    main, nice=True,
                )  # fmt: skip
                return name
            except GitError:
                if folder.exists() or not _branch_exists(main, branch):
                    raise
        number += 1
        name = f"{stem}-{number}"


def _safe_relative(entry: str) -> str | None:
    path = PurePosixPath(entry.strip())
    if not entry.strip() or path.is_absolute() or ".." in path.parts:
        return None
    return str(path)


def copy_listed(main: Path, target: Path, entries: Sequence[str]) -> tuple[list[str], list[str]]:
    """Copy each entry (a path or glob relative to the project) that exists in `main` and
    not in `target`; returns (copied, matched nothing). Symlinks are copied as links."""
    copied: list[str] = []
    missing: list[str] = []
    for entry in entries:
        relative = _safe_relative(entry)
        if relative is None:
            missing.append(entry)
            continue
        matches = sorted(main.glob(relative)) if any(c in relative for c in "*?[") else []
        if not matches and os.path.lexists(main / relative):
            matches = [main / relative]
        if not matches:
            missing.append(entry)
            continue
        for source in matches:
            name = source.relative_to(main)
            if name.parts and name.parts[0] == ".git":
                continue
            destination = target / name
            if os.path.lexists(destination):
                continue
            destination.parent.mkdir(parents=True, exist_ok=True)
            if source.is_dir() and not source.is_symlink():
                shutil.copytree(source, destination, symlinks=True)
            else:
                shutil.copy2(source, destination, follow_symlinks=False)
            copied.append(str(PurePosixPath(name)))
    return copied, missing


def carry_over(main: Path, target: Path) -> list[str]:
    """Bring the main folder's uncommitted changes into `target` (at the same commit):
    tracked changes as a patch on the files, untracked files copied. Nothing in `main`
    changes. Returns the paths carried."""
    patch = run_git_bytes(["diff", "--binary", "--no-color", "--no-ext-diff", "HEAD"], main)
    carried: list[str] = []
    if patch.strip():
        run_git(["apply", "--binary", "--whitespace=nowarn"], target, stdin=patch)
        names = run_git(["diff", "--name-only", "-z", "HEAD"], main)
        carried += [name for name in names.split("\0") if name]
    untracked = run_git(["ls-files", "--others", "--exclude-standard", "-z"], main)
    for name in (n for n in untracked.split("\0") if n):
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(main / name, destination, follow_symlinks=False)
        carried.append(name)
    return carried


def create_worktree(
    project: str | os.PathLike[str],
    pane_id: int,
    task: str,
    *,
    copy: Sequence[str] = (),
    carry: bool = False,
    root: Path | None = None,
) -> Created:
    """A new worktree for worker `pane_id` on branch `melgui/<pane>-<slug>` at HEAD.

    On any failure after `git worktree add`, the new worktree and branch (holding no
    work yet) are removed again and WorktreeError says why.
    """
    main, base = repository_of(project, nice=False)  # a person waits on this
    home = (root or worktrees_root()) / project_folder_name(main)
    try:
        home.mkdir(parents=True, exist_ok=True)
        name = _add_worktree(main, home, f"{pane_id}-{slug(task)}", base)
        folder = home / name
        branch = BRANCH_PREFIX + name
    except (GitError, OSError) as exc:
        raise WorktreeError(f"Could not create a worktree for the worker: {exc}") from exc
    worktree = Worktree(path=folder, branch=branch, base=base, main=main)
    try:
        Note(base, branch, task).write(folder)
        copied, missing = copy_listed(main, folder, copy)
        carried = carry_over(main, folder) if carry else []
    except (GitError, OSError) as exc:
        _undo(worktree)
        raise WorktreeError(f"Could not prepare the worker's worktree: {exc}") from exc
    return Created(worktree, copied, missing, carried)


def _undo(worktree: Worktree) -> None:
    """Remove a worktree this module just made (it holds nothing but what was copied)."""
    with admin_lock(worktree.main):
        for args in (
            ["worktree", "remove", "--force", str(worktree.path)],
            ["branch", "-D", worktree.branch],
        ):
            with contextlib.suppress(GitError):
                run_git(args, worktree.main)
    Note.path_for(worktree.path).unlink(missing_ok=True)
