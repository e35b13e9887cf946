"""A snapshot of the project tree as git sees it, into the shadow repository.

Only what changed since the last snapshot is hashed: `status` against the shadow index
(with its untracked cache) lists modified, deleted and new files, ignore rules honoured;
`update-index` hashes just those, and `write-tree` makes the index a tree (reading the
index once, not walking the tree again as `commit` would); the commit of that tree and
HEAD are written here, the bytes `commit-tree` and `update-ref` would write, without two
more git processes. When nothing changed, the snapshot is HEAD as it is: one git
process, like `git status` itself. Many new files (a first snapshot) are added with
`git add -A` into one pack, not a loose object file each.
Files over the size cap are left out and named.
"""

from __future__ import annotations

import asyncio
import os
import stat
from dataclasses import dataclass, field
from pathlib import Path

from melgui.core.config.special_files import Listing, read_rules, special_rule_files
from melgui.core.store.checkpoints.shadow import GitError, ShadowRepo

DEFAULT_MAX_FILE_BYTES = 20 * 1024 * 1024
MANY_PATHS = 200
BIG_LISTING = 64 * 1024  # bytes of `status` output read in a thread, not on the loop
# Many new files (a first snapshot) go into one pack as `git add` hashes them (its "bulk
# checkin", used for files over core.bigFileThreshold), not a loose object file each:
# for 10,000 files, 3 MB written instead of 42 MB, and 40% less CPU. Not synced to disk,
# as loose objects are not (git syncs packs by default).
BULK = ("-c", "core.bigFileThreshold=1", "-c", "core.fsync=none")


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
    notes: tuple[str, ...] = field(default=())  # special files skipped, in words


class Snapshotter:
    """Takes snapshots of one project; not safe to run twice at once (see FolderLock)."""

    def __init__(self, repo: ShadowRepo, max_file_bytes: int = DEFAULT_MAX_FILE_BYTES) -> None:
        self.repo = repo
        self.max_file_bytes = max_file_bytes
        self._large: set[str] = set()
        self._nested: set[str] = set()  # repositories of their own, and folders with
        self._special: dict[str, str] = {}  # a special rules file (folder -> why)
        self._listings: dict[bytes, Listing] = {}
        self._notes: list[str] = []
        self._exclude_text: str | None = None
        self.taken = False  # a snapshot was taken (the tree is in the shadow index)

    async def take(self) -> Snapshot:
        repo = self.repo
        await repo.ensure()
        # Only the holder of the folder's lock runs git that writes here: an index.lock
        # is a killed git's (a cancelled snapshot, a melgui killed) and would fail every
        # snapshot from now on; the pack it was writing is half a file, never used.
        if (repo.git_dir / "index.lock").exists():
            await asyncio.to_thread(_clear_killed, repo.git_dir)
        self._recheck_large()
        await asyncio.to_thread(self._find_rules)
        if self._special:
            await repo.run(
                "rm", "--cached", "-r", "-q", "--ignore-unmatch", "--",
                *sorted(self._special), check=False,
            )  # fmt: skip
        # One pass like `git status` (untracked cache and all): the shadow index against
        # the last snapshot (HEAD) and the tree against the index.
        listing = await repo.run(
            "status", "--porcelain=v1", "-z", "--untracked-files=all", "--no-renames",
            "--ignore-submodules=all",
        )  # fmt: skip
        left_out = len(self._large) + len(self._nested)
        if len(listing) > BIG_LISTING:  # a first snapshot: a stat a file, off the loop
            paths, untrack, staged = await asyncio.to_thread(self._read_listing, listing)
        else:
            paths, untrack, staged = self._read_listing(listing)
        if len(self._large) + len(self._nested) != left_out:  # newly left out
            await asyncio.to_thread(self._write_exclude)
        head = read_head(repo.git_dir)
        if head is not None and not paths and not untrack and not staged:
            return self._snapshot(head)  # nothing changed
        if untrack:
            await repo.run(
                "rm", "--cached", "-q", "--pathspec-from-file=-", "--pathspec-file-nul",
                stdin=_join(untrack),
            )  # fmt: skip
        if paths:
            await self._stage(paths)
        # The index is the snapshot now: its tree and a commit on HEAD, without the
        # second pass over every file that `commit` (its index refresh) would make.
        tree = (await repo.run("write-tree")).decode("ascii").strip()
        commit = await asyncio.to_thread(repo.commit, tree, head)
        if commit is None:  # not SHA-1 ids: git writes the commit
            parent = ("-p", head) if head is not None else ()
            made = await repo.run("commit-tree", tree, *parent, "-m", "checkpoint")
            commit = made.decode("ascii").strip()
            await repo.run("update-ref", "HEAD", commit)
        return self._snapshot(commit)

    def _read_listing(self, listing: bytes) -> tuple[list[str], list[str], bool]:
        """From `status`: the paths to hash, those to drop from the index (now over the
        size cap), and whether the index differs from HEAD; notes nested repositories
        and files over the cap."""
        paths: list[str] = []
        untrack: list[str] = []
        staged = False
        for entry in _split(listing):
            index, worktree, path = entry[0], entry[1], entry[3:]
            staged = staged or index not in (" ", "?")
            if worktree == " ":
                continue
            if index == "?" and path.endswith("/"):
                self._nested.add(path.rstrip("/"))  # a repository of its own: not ours
                continue
            size = _size(os.path.join(self.repo.project, path))
            if size is not None and size > self.max_file_bytes:
                self._large.add(path)
                if index != "?":
                    untrack.append(path)
                continue
            paths.append(path)
        return paths, untrack, staged

    def _snapshot(self, head: str) -> Snapshot:
        self.taken = True
        left_out = self._large | self._nested | set(self._special)
        notes = [
            *self._notes,
            *(f"{folder}/ left out: {why}" for folder, why in self._special.items()),
        ]
        return Snapshot(head, tuple(sorted(left_out)), tuple(notes))

    def _find_rules(self) -> None:
        """`_find_special` and then `_write_exclude`: one trip to a thread, not two."""
        self._find_special()
        self._write_exclude()

    def _find_special(self) -> None:
        """Folders whose `.gitignore` or `.gitattributes` git would block on (a FIFO, a
        device, a link to one) are left out; at the top, no snapshot can be taken."""
        project = self.repo.project
        self._special = {}
        for path, why in special_rule_files(project, self._listings):
            folder = os.path.relpath(os.path.dirname(path), project).replace(os.sep, "/")
            if folder == ".":
                raise GitError(f"{why}; git would wait on it for ever, so nothing was saved")
            self._special[folder] = why

    def _recheck_large(self) -> None:
        """A file left out for its size comes back once it is small again (or gone)."""
        for path in list(self._large):
            size = _size(os.path.join(self.repo.project, path))
            if size is None or size <= self.max_file_bytes:
                self._large.discard(path)

    async def _stage(self, paths: list[str]) -> None:
        """Hash exactly the paths status named into the index (deleted ones leave it), or,
        when git refuses one (a folder that became a repository, say), or there are many
        (a first snapshot), add as a whole."""
        if len(paths) > MANY_PATHS:  # one scan, into one pack (update-index packs only
            await self._add(paths)  # from git 2.37 on; `add` always has)
            return
        try:
            await self.repo.run(
                "update-index", "--add", "--remove", "--replace", "-z", "--stdin",
                stdin=_join(paths),
            )  # fmt: skip
        except GitError:
            await self._add(paths)

    async def _add(self, paths: list[str]) -> None:
        try:
            if len(paths) > MANY_PATHS:  # matching many pathspecs costs more than a scan
                await self.repo.run(*BULK, "add", "-A")
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
        """The project's own info/exclude (read only, if it is a regular file) plus the
        files over the cap, nested repositories and folders with special rules files."""
        own = read_rules(os.path.join(self.repo.project, ".git", "info", "exclude"))
        self._notes = [own.note] if own.note else []
        lines = [own.text]
        lines += ["/" + _escape(path) for path in sorted(self._large | self._nested)]
        lines += ["/" + _escape(path) + "/" for path in sorted(self._special)]
        text = "\n".join(lines) + "\n"
        if text != self._exclude_text:
            target = self.repo.git_dir / "info" / "exclude"
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(text, encoding="utf-8", errors="surrogateescape")
            self._exclude_text = text


def _clear_killed(git_dir: Path) -> None:
    """What a git killed while it staged leaves: the index's lock and its unfinished pack."""
    for leftover in (git_dir / "objects" / "pack").glob("tmp_*"):
        leftover.unlink(missing_ok=True)
    (git_dir / "index.lock").unlink(missing_ok=True)


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
