"""What removing a worktree would lose, and which files a worker changed.

Work is what exists nowhere else: uncommitted changes to tracked files, untracked files
(ignored ones are not work: copies and build output), commits on the worktree's branch
that the main folder's HEAD does not contain, and commits the worktree's HEAD holds on no
branch at all (a worker that ran `git checkout --detach` and committed: removing the
worktree would leave them to git's garbage collection).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from melgui.core.worktrees.git import GitError, run_git
from melgui.core.worktrees.model import Worktree

NAMED = 3  # files or commits named in a description before "and N more"


@dataclass(frozen=True, slots=True)
class WorkAtRisk:
    uncommitted: list[str] = field(default_factory=list)  # tracked files changed or deleted
    untracked: list[str] = field(default_factory=list)
    unmerged: list[str] = field(default_factory=list)  # "abc1234 subject", newest first
    folder_missing: bool = False
    detached: list[str] = field(default_factory=list)  # on the worktree's HEAD, no branch

    @property
    def empty(self) -> bool:
        return not (self.uncommitted or self.untracked or self.unmerged or self.detached)

    def describe(self) -> str:
        """ "2 uncommitted changes (a.py, b.py), 1 commit not merged (…)", or "no work"."""
        parts = []
        if self.uncommitted:
            parts.append(_count(self.uncommitted, "uncommitted change"))
        if self.untracked:
            parts.append(_count(self.untracked, "untracked file"))
        if self.unmerged:
            parts.append(_count(self.unmerged, "commit not merged into the main folder's branch"))
        if self.detached:
            parts.append(_count(self.detached, "commit on no branch (detached HEAD)"))
        return "; ".join(parts) if parts else "no work that is not merged"


def _count(items: list[str], noun: str) -> str:
    shown = ", ".join(items[:NAMED]) + (
        f" and {len(items) - NAMED} more" if len(items) > NAMED else ""
    )
    plural = (
        noun.replace("change", "changes").replace("file", "files").replace("commit ", "commits ")
    )
    return f"{len(items)} {noun if len(items) == 1 else plural} ({shown})"


def _status(worktree: Worktree) -> tuple[list[str], list[str]]:
    out = run_git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], worktree.path)
    changed: list[str] = []
    untracked: list[str] = []
    entries = iter(out.split("\0"))
    for entry in entries:
        if len(entry) < 4:
            continue
        code, path = entry[:2], entry[3:]
        if code == "??":
            untracked.append(path)
        else:
            changed.append(path)
            if code[0] in "RC":
                next(entries, None)  # the rename's source path
    return changed, untracked


def unmerged_commits(worktree: Worktree) -> list[str]:
    """Commits on the worktree's branch that the main folder's HEAD lacks."""
    try:
        out = run_git(
            ["log", "--format=%h %s", f"refs/heads/{worktree.branch}", "--not", "HEAD", "--"],
            worktree.main,
        )
    except GitError:
        if not run_git(["branch", "--list", worktree.branch], worktree.main).strip():
            return []  # no such branch (any more): nothing on it to lose
        raise
    return [line for line in out.splitlines() if line.strip()]


def detached_commits(worktree: Worktree) -> list[str]:
    """Commits the worktree's HEAD reaches that no branch, tag or remote does (empty when
    HEAD is on a branch: those are `unmerged_commits`' or survive the removal)."""
    out = run_git(
        ["log", "--format=%h %s", "HEAD", "--not", "--branches", "--tags", "--remotes", "--"],
        worktree.path,
    )
    return [line for line in out.splitlines() if line.strip()]


def work_at_risk(worktree: Worktree) -> WorkAtRisk:
    """What exists only in this worktree; GitError when git cannot tell."""
    unmerged = unmerged_commits(worktree)
    if not worktree.path.is_dir():
        return WorkAtRisk(unmerged=unmerged, folder_missing=True)
    changed, untracked = _status(worktree)
    return WorkAtRisk(changed, untracked, unmerged, detached=detached_commits(worktree))


@dataclass(frozen=True, slots=True)
class FileChange:
    status: str  # git's letter: A added, M modified, D deleted, R renamed, ? untracked
    path: str


def changed_files(worktree: Worktree) -> list[FileChange]:
    """Every file that differs from the base: committed or not, plus untracked files."""
    if not worktree.path.is_dir():
        raise GitError(f"The worktree folder {worktree.path} no longer exists.")
    out = run_git(
        ["diff", "--name-status", "-z", "--no-renames", worktree.base, "--"], worktree.path
    )
    fields = [f for f in out.split("\0") if f]
    changes = [FileChange(fields[i][:1], fields[i + 1]) for i in range(0, len(fields) - 1, 2)]
    _, untracked = _status(worktree)
    changes += [FileChange("?", path) for path in untracked]
    return changes


def describe_changes(changes: list[FileChange], limit: int = 50, unlisted: int = 0) -> str:
    """ "M src/a.py, A src/b.py, ? notes.txt" (at most `limit` named; `unlisted`: more
    files changed that `changes` does not list, counted with the rest)."""
    shown = ", ".join(f"{c.status} {c.path}" for c in changes[:limit])
    rest = max(len(changes) - limit, 0) + unlisted
    return shown + (f" and {rest} more" if rest else "")
