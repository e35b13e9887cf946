"""What a worker changed in its worktree: the commits on its branch since the base, and
every file that differs between the base and the worktree as it is now (committed,
uncommitted and untracked), as files and hunks.

Reading never writes: no index refresh, no objects, nothing in the main folder.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from pathlib import Path

from melgui.core.worktrees.changes.diff import FileChange, parse_diff
from melgui.core.worktrees.changes.git import ChangesError, dirty_paths, git
from melgui.core.worktrees.changes.new_files import new_file_patch
from melgui.core.worktrees.model import Worktree

MAX_UNTRACKED = 500  # new files shown; more are counted in `left_out`
_PARALLEL = 4
DIFF_OPTIONS = (
    "--binary",
    "--full-index",
    "--no-color",
    "--no-ext-diff",
    "--no-textconv",
    "--src-prefix=a/",
    "--dst-prefix=b/",
)


@dataclass(frozen=True, slots=True)
class Commit:
    sha: str
    short: str
    author: str
    date: str  # YYYY-MM-DD
    subject: str


@dataclass(frozen=True, slots=True)
class WorktreeChanges:
    worktree: Worktree
    commits: tuple[Commit, ...]
    files: tuple[FileChange, ...]
    uncommitted: tuple[str, ...]  # paths with edits not committed in the worktree
    left_out: int = 0  # untracked files beyond MAX_UNTRACKED, not listed

    def file(self, path: str) -> FileChange:
        for change in self.files:
            if change.path == path:
                return change
        raise KeyError(path)

    @property
    def empty(self) -> bool:
        return not self.files and not self.commits


async def read_changes(worktree: Worktree) -> WorktreeChanges:
    """The worktree against its base. ChangesError when it cannot be read."""
    folder = worktree.path
    if not folder.is_dir():
        raise ChangesError(f"The worker's worktree {folder} does not exist any more.")
    commits = await _commits(worktree)
    tracked = await git(folder, "diff", *DIFF_OPTIONS, "-M", worktree.base, "--", read_only=True)
    files = parse_diff(tracked.text)
    listed = await git(folder, "ls-files", "--others", "--exclude-standard", "-z", read_only=True)
    untracked = [path for path in listed.text.split("\0") if path and not path.endswith("/")]
    shown = sorted(untracked)[:MAX_UNTRACKED]
    files.extend(await _new_files(worktree, shown))
    dirty = await dirty_paths(folder)
    marked = tuple(
        dataclasses.replace(change, uncommitted=any(path in dirty for path in change.paths))
        for change in files
    )
    return WorktreeChanges(
        worktree=worktree,
        commits=commits,
        files=marked,
        uncommitted=tuple(sorted(dirty)),
        left_out=len(untracked) - len(shown),
    )


async def uncommitted_in(folder: Path) -> Worktree:
    """The repository of the project folder, read as a worktree whose base is its HEAD:
    what `read_changes` then gives is its uncommitted changes (new files too), to review.
    ChangesError when it is no git repository or has no commit to compare with."""
    top = await git(folder, "rev-parse", "--show-toplevel", read_only=True, check=False)
    if top.code != 0:
        raise ChangesError(f"{folder} is not a git repository: there are no changes to review.")
    root = Path(top.text.strip())
    head = await git(root, "rev-parse", "--verify", "-q", "HEAD^{commit}", read_only=True,
                     check=False)  # fmt: skip
    if head.code != 0:
        raise ChangesError(f"{root} has no commit yet: there is nothing to compare with.")
    named = await git(root, "symbolic-ref", "--short", "-q", "HEAD", read_only=True,
                      check=False)  # fmt: skip
    return Worktree(root, named.text.strip() or "HEAD", head.text.strip(), root)


async def _commits(worktree: Worktree) -> tuple[Commit, ...]:
    result = await git(
        worktree.path,
        "log",
        "--no-color",
        "--date=short",
        "--format=%H%x1f%h%x1f%an%x1f%ad%x1f%s%x1e",
        f"{worktree.base}..{worktree.branch}",
        "--",
        read_only=True,
        check=False,
    )
    if result.code != 0:
        raise ChangesError(
            f"Cannot list the commits of {worktree.branch} since {worktree.base[:10]}: "
            f"{result.err.strip() or result.code}"
        )
    commits: list[Commit] = []
    for record in result.text.split("\x1e"):
        fields = record.strip("\n").split("\x1f")
        if len(fields) == 5:
            commits.append(Commit(*fields))
    return tuple(commits)


async def _new_files(worktree: Worktree, paths: list[str]) -> list[FileChange]:
    """Untracked files as "added" changes: text files written here (in a thread), the
    rest by `git diff --no-index` (which hashes without storing)."""
    limit = asyncio.Semaphore(_PARALLEL)
    written = await asyncio.to_thread(
        lambda: [new_file_patch(worktree.path, path) for path in paths]
    )

    async def one(path: str, patch: str | None) -> list[FileChange]:
        if patch is not None:
            return parse_diff(patch)
        async with limit:
            result = await git(
                worktree.path,
                "diff",
                "--no-index",
                *DIFF_OPTIONS,
                "--",
                "/dev/null",
                path,
                read_only=True,
                ok_codes=(0, 1),
            )
        return parse_diff(result.text)

    pairs = zip(paths, written, strict=True)
    found = await asyncio.gather(*(one(path, patch) for path, patch in pairs))
    return [change for changes in found for change in changes]
