"""A snapshot of the project tree as git sees it, into the shadow repository.

Only what changed since the last snapshot is hashed: `ls-files` against the shadow index
lists modified, deleted and new files (ignore rules honoured), `add` takes just those,
`write-tree` reuses the cached trees. Files over the size cap are left out and named.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from melgui.core.store.checkpoints.shadow import GitError, ShadowRepo

DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024


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
        self._commits: dict[str, str] = {}

    async def take(self) -> Snapshot:
        repo = self.repo
        await repo.ensure()
        self._write_exclude()
        listing = await repo.run(
            "ls-files", "-z", "-t", "-m", "-o", "--exclude-standard", "--full-name"
        )
        paths: list[str] = []
        untrack: list[str] = []
        large_changed = False
        for entry in _split(listing):
            tag, path = entry[:1], entry[2:]
            size = _size(os.path.join(repo.project, path))
            if size is not None and size > self.max_file_bytes:
                if path not in self._large:
                    self._large.add(path)
                    large_changed = True
                if tag != "?":
                    untrack.append(path)
                continue
            if path in self._large:
                self._large.discard(path)
                large_changed = True
            paths.append(path)
        if large_changed:
            self._write_exclude()
        if untrack:
            await repo.run(
                "rm", "--cached", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
                stdin=_join(untrack),
            )  # fmt: skip
        if paths:
            await self._add(paths)
        tree = (await repo.run("write-tree")).decode().strip()
        commit = self._commits.get(tree)
        if commit is None:
            commit = (await repo.run("commit-tree", tree, "-m", "checkpoint")).decode().strip()
            await repo.run("update-ref", f"refs/keep/{commit}", commit)
            self._commits[tree] = commit
        return Snapshot(commit, tuple(sorted(self._large)))

    async def _add(self, paths: list[str]) -> None:
        try:
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

    def forget(self) -> None:
        """Drop the cache of commits (after pruning removed some)."""
        self._commits.clear()

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
