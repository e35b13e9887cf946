"""A snapshot of the project tree as git sees it, into the shadow repository.

Only what changed since the last snapshot is hashed: `status` against the shadow index
(with its untracked cache) lists modified, deleted and new files, ignore rules honoured;
`add` takes just those and `commit` writes the snapshot as the shadow HEAD. When nothing
changed, the snapshot is HEAD as it is: one git process, like `git status` itself.
Files over the size cap are left out and named.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from melgui.core.store.checkpoints.shadow import GitError, ShadowRepo

DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024
MANY_PATHS = 200


def read_head(git_dir: Path) -> str | None:
    """The commit HEAD names (loose or packed ref), without starting git."""
    try:
        head = (git_dir / "HEAD").read_text(encoding="ascii").strip()
    except OSError:
        return None
    if not head.startswith("ref: "):
        return head or None
    ref = head[5:]
    try:
        return (git_dir / ref).read_text(encoding="ascii").strip() or None
    except OSError:
        pass
    try:
        packed = (git_dir / "packed-refs").read_text(encoding="ascii")
    except OSError:
        return None
    for line in packed.splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


@dataclass(frozen=True)
class Snapshot:
    """A commit of the shadow repository and the files the size cap left out."""

    commit: str
    skipped: tuple[str, ...] = field(default=())


class Snapshotter:
    """Takes snapshots of one project; not safe to run twice at once (see FolderLock)."""

    def __init__(self, repo: ShadowRepo, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        self.repo = repo
        self.max_file_bytes = max_file_bytes
        self._large: set[str] = set()
        self._exclude_text: str | None = None

    async def take(self) -> Snapshot:
        repo = self.repo
        await repo.ensure()
        self._recheck_large()
        self._write_exclude()
        # One pass like `git status` (untracked cache and all): the shadow index against
        # the last snapshot (HEAD) and the tree against the index.
        listing = await repo.run(
            "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules=all",
        )  # fmt: skip
        paths: list[str] = []
        untrack: list[str] = []
        staged = new = False
        for entry in _split(listing):
            index, worktree, path = entry[0], entry[1], entry[3:]
            staged = staged or index not in (" ", "?")
            if worktree == " ":
                continue
            size = _size(os.path.join(repo.project, path))
            if size is not None and size > self.max_file_bytes:
                self._large.add(path)
                if index != "?":
                    untrack.append(path)
                continue
            new = new or index == "?"
            paths.append(path)
        self._write_exclude()
        head = read_head(repo.git_dir)
        if head is not None and not paths and not untrack and not staged:
            return Snapshot(head, tuple(sorted(self._large)))  # nothing changed
        if untrack:
            await repo.run(
                "rm", "--cached", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
                stdin=_join(untrack),
            )  # fmt: skip
        commit = ["commit", "-q", "--allow-empty", "--no-verify", "--no-status", "-m", "checkpoint"]
        if new:
            await self._add(paths)
        elif paths:
            commit.append("--all")  # only tracked files changed: the commit stages them
        await repo.run(*commit)
        head = read_head(repo.git_dir)
        if head is None:
            raise GitError("the shadow repository has no HEAD after a commit")
        return Snapshot(head, tuple(sorted(self._large)))

    def _recheck_large(self) -> None:
        """A file left out for its size comes back once it is small again (or gone)."""
        for path in list(self._large):
            size = _size(os.path.join(self.repo.project, path))
            if size is None or size <= self.max_file_bytes:
                self._large.discard(path)

    async def _add(self, paths: list[str]) -> None:
        try:
            if len(paths) > MANY_PATHS:  # matching many pathspecs costs more than a scan
                await self.repo.run("add", "-A")
            else:
                await self.repo.run(
                    "add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul",
                    stdin=_join(paths),
                )  # fmt: skip
        except GitError:
            # A nested repository without a commit, or a file gone in between: leave out
            # folders that are repositories of their own, and take the rest as a whole.
            for path in paths:
                if path.endswith("/"):
                    self._large.add(path.rstrip("/"))
            self._write_exclude()
            await self.repo.run("add", "-A", "--ignore-errors", check=False)

    def _write_exclude(self) -> None:
        """The project's own info/exclude (read only) plus the files over the cap."""
        lines = [_read_project_exclude(self.repo.project)]
        lines += ["/" + _escape(path) for path in sorted(self._large)]
        text = "\n".join(lines) + "\n"
        if text != self._exclude_text:
            target = self.repo.git_dir / "info" / "exclude"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", errors="surrogateescape")
            self._exclude_text = text


def _read_project_exclude(project: str) -> str:
    try:
        return (Path(project) / ".git" / "info" / "exclude").read_text(
            encoding="utf-8", errors="surrogateescape"
        )
    except OSError:
        return ""


def _escape(path: str) -> str:
    out = "".join("\\" + ch if ch in "*?[\\" else ch for ch in path)
    if out[:1] in ("#", "!"):
        out = "\\" + out
    if out.endswith(" "):
        out = out[:-1] + "\\ "
    return out


def _size(path: str) -> int | None:
    try:
        info = os.lstat(path)
    except OSError:
        return None
    return info.st_size if stat.S_ISREG(info.st_mode) else None


def _split(output: bytes) -> list[str]:
    return [p.decode("utf-8", "surrogateescape") for p in output.split(b"\0") if p]


def _join(paths: list[str]) -> bytes:
    return b"".join(p.encode("utf-8", "surrogateescape") + b"\0" for p in paths)
