"""Checkpointer: the checkpoints of one project folder, around calls and for undo.

    checkpoints = Checkpointer(folder)
    async with checkpoints.guard(call.id, call.name, "edit a.py", source="main"):
        ...run the call...
    plan = await checkpoints.plan([record_id])       # conflicts: plan.conflicts
    restore = await checkpoints.restore([record_id], {"a.py": "before"})

A guard holds the folder's lock from the snapshot before the call to the snapshot when
its result arrives, so two agents in one folder never blame each other's edits. When a
snapshot fails (no git, a disk full) the call still runs; `problem` says why.

`warm()` (a session opened) takes the project's first snapshot in the background, under
the same lock: the first call's checkpoint waits for it if it still runs, then finds the
tree as that snapshot left it (one `git status`), never hashing every file itself. Its
snapshot before the call is still taken after the wait, so an edit is undone to what the
file held just before the call, whatever the background snapshot saw.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path

from melgui.core.store.checkpoints.changes import tree_changes
from melgui.core.store.checkpoints.lock import folder_lock
from melgui.core.store.checkpoints.log import CheckpointLog, CheckpointRecord
from melgui.core.store.checkpoints.restore import (
    Choice,
    RestorePlan,
    apply_targets,
    describe_linked,
    plan_undo,
)
from melgui.core.store.checkpoints.shadow import GitError, ShadowRepo, shadow_root
from melgui.core.store.checkpoints.snapshot import (
    DEFAULT_MAX_FILE_BYTES,
    Snapshotter,
    read_head,
)
from melgui.core.store.paths import canonical_folder, data_dir, database_path

log = logging.getLogger(__name__)

DAY = 24 * 3600.0


class Checkpointer:
    """Snapshots, the index of checkpoints and restores for one project folder."""

    def __init__(
        self,
        folder: str,
        *,
        data_folder: Path | None = None,
        log_: CheckpointLog | None = None,
        max_file_bytes: int = DEFAULT_MAX_FILE_BYTES,
        keep_days: float = 30.0,
        max_bytes: int = 2 * 1024**3,
    ) -> None:
        self.folder = canonical_folder(folder)
        self._data = data_folder if data_folder is not None else data_dir()
        self.repo = ShadowRepo(shadow_root(self._data, self.folder), self.folder)
        self.snapshots = Snapshotter(self.repo, max_file_bytes)
        self._log = log_
        self.keep_days = keep_days
        self.max_bytes = max_bytes
        self.problem: str | None = None
        self.skipped: list[str] = []  # what the last restore left alone, one line each
        self.notes: list[str] = []  # special files the last snapshot skipped
        self._lock_file = self.repo.root / "lock"
        self._warming: asyncio.Task[None] | None = None

    @property
    def log(self) -> CheckpointLog:
        if self._log is None:
            self._log = CheckpointLog.open(database_path(self._data))
        return self._log

    def close(self) -> None:
        """Close the index; a background snapshot still running is cancelled (its git
        ended), not waited on."""
        if self._warming is not None and not self._warming.done():
            self._warming.cancel()
        if self._log is not None:
            self._log.close()
            self._log = None

    async def aclose(self) -> None:
        """`close`, and wait until a cancelled background snapshot's git is reaped."""
        warming = self._warming
        self.close()
        if warming is not None:
            with contextlib.suppress(asyncio.CancelledError):
                await warming

    # -- the first snapshot, in the background -----------------------------------------

    def warm(self) -> None:
        """Start the project's first snapshot now, in the background (a session opened),
        so the first call that changes files does not take all of it. Once per
        Checkpointer; nothing when the shadow repository has a snapshot already (a later
        one hashes only what changed since: a `git status` a session need not pay for
        up front), or outside a running event loop. Only git's processes work: the loop
        thread parses their output and waits."""
        if self._warming is not None or self._has_snapshot():
            return
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        self._warming = loop.create_task(self._warm(), name=f"checkpoints of {self.folder}")

    @property
    def warming(self) -> asyncio.Task[None] | None:
        """The background snapshot's task (None: never started)."""
        return self._warming

    def _has_snapshot(self) -> bool:
        return self.snapshots.taken or read_head(self.repo.git_dir) is not None

    async def _warm(self) -> None:
        async with folder_lock(self._lock_file):
            if self._has_snapshot():  # a call's checkpoint (or another melgui) came first
                return
            try:
                await self.snapshots.take()
            except (GitError, OSError) as exc:  # the call's own checkpoint will say why
                log.info("background snapshot of %s failed: %s", self.folder, exc)

    # -- around a call -------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def guard(
        self, call_id: str, tool: str, summary: str, *, source: str
    ) -> AsyncIterator[int | None]:
        """Checkpoint before and after the body; yields the record id (None: no snapshot)."""
        async with folder_lock(self._lock_file):
            record_id = await self._begin(call_id, tool, summary, source)
            try:
                yield record_id
            finally:
                if record_id is not None:
                    await self._finish(record_id)

    async def _begin(self, call_id: str, tool: str, summary: str, source: str) -> int | None:
        try:
            snapshot = await self.snapshots.take()
            self.notes = list(snapshot.notes)
            await self._close_interrupted(snapshot.commit)
            record_id = self.log.begin(self.folder, source, call_id, tool, summary, snapshot.commit)
        except (GitError, OSError) as exc:
            self.problem = f"No checkpoint: {exc}"
            log.warning("checkpoint before %s failed: %s", tool, exc)
            return None
        self.problem = None
        return record_id

    async def _finish(self, record_id: int, restores: tuple[int, ...] = ()) -> None:
        record = self.log.get(record_id)
        try:
            snapshot = await self.snapshots.take()
            self.notes = list(snapshot.notes)
            assert record is not None
            files = await tree_changes(self.repo, record.before, snapshot.commit)
        except (GitError, OSError) as exc:
            self.problem = f"No checkpoint after the call: {exc}"
            log.warning("checkpoint after call failed: %s", exc)
            return
        self.log.finish(record_id, snapshot.commit, files, snapshot.skipped, restores)

    async def _close_interrupted(self, now: str) -> None:
        """Records left "running" by a melgui that died (we hold the lock, so none runs):
        their change is what the tree shows now, and they read as interrupted."""
        for record in self.log.running(self.folder):
            files = await tree_changes(self.repo, record.before, now)
            self.log.finish(record.id, now, files, ())
            self.log.mark_interrupted(record.id)

    async def recover(self) -> None:
        """Complete what a killed melgui left running (before listing, say)."""
        async with folder_lock(self._lock_file):
            if self.log.running(self.folder):
                await self._close_interrupted((await self.snapshots.take()).commit)

    # -- reading -------------------------------------------------------------------------

    def records(self) -> list[CheckpointRecord]:
        return self.log.for_folder(self.folder)

    def for_calls(self, call_ids: list[str]) -> list[CheckpointRecord]:
        return self.log.for_calls(self.folder, call_ids)

    async def diff(self, record: CheckpointRecord, path: str | None = None) -> str:
        """The change of a checkpoint as a unified diff (binary files named, not shown)."""
        if record.after is None:
            return ""
        paths = [path] if path else []
        out = await self.repo.run("diff", "--no-color", record.before, record.after, "--", *paths)
        return out.decode("utf-8", "replace")

    async def line_counts(self, record: CheckpointRecord) -> dict[str, tuple[int, int]]:
        """Per file the checkpoint changed, its lines added and removed (0, 0: binary)."""
        if record.after is None or not record.files:
            return {}
        out = await self.repo.run("diff", "--numstat", record.before, record.after)
        counts: dict[str, tuple[int, int]] = {}
        for line in out.decode("utf-8", "replace").splitlines():
            added, removed, path = [*line.split("\t", 2), "", ""][:3]
            if path:
                counts[path] = (int(added) if added.isdigit() else 0,
                                int(removed) if removed.isdigit() else 0)  # fmt: skip
        return counts

    async def compare_with_now(self, record: CheckpointRecord) -> str:
        """How the files this call changed differ now from how the call left them."""
        if record.after is None or not record.files:
            return ""
        async with folder_lock(self._lock_file):
            now = (await self.snapshots.take()).commit
        paths = [change.path for change in record.files]
        out = await self.repo.run("diff", "--no-color", record.after, now, "--", *paths)
        return out.decode("utf-8", "replace")

    # -- undo ----------------------------------------------------------------------------

    async def plan(self, record_ids: list[int]) -> RestorePlan:
        """What undoing these checkpoints would do, with the conflicts it would meet."""
        records = self._records(record_ids)
        return plan_undo(self.folder, (r.files for r in records))

    async def restore(
        self, record_ids: list[int], choices: Mapping[str, Choice] | None = None
    ) -> CheckpointRecord:
        """Undo these checkpoints (a conflict keeps its current version unless `choices`
        says otherwise); the restore is itself a checkpoint, so it can be undone."""
        records = self._records(record_ids)
        names = ", ".join(f"#{r.id}" for r in records)
        async with folder_lock(self._lock_file):
            restore_id = await self._begin("", "restore", f"undo {names}", "undo")
            if restore_id is None:
                raise GitError(self.problem or "no checkpoint could be taken")
            try:
                plan = plan_undo(self.folder, (r.files for r in records))
                skipped = await apply_targets(self.repo, plan.targets(choices or {}))
                self.skipped = describe_linked(self.folder, sorted({*plan.linked, *skipped}))
            finally:
                await self._finish(restore_id, tuple(r.id for r in records))
        done = self.log.get(restore_id)
        assert done is not None
        return done

    def _records(self, record_ids: list[int]) -> list[CheckpointRecord]:
        records = []
        for record_id in sorted(set(record_ids)):
            record = self.log.get(record_id)
            if record is None or record.folder != self.folder:
                raise KeyError(f"no checkpoint #{record_id} in {self.folder}")
            if record.after is None:
                raise ValueError(f"checkpoint #{record_id} is still running")
            records.append(record)
        return records

    # -- pruning -------------------------------------------------------------------------

    async def prune(self, now: float | None = None) -> int:
        """Drop checkpoints older than keep_days, then the oldest while the shadow repository
        is bigger than max_bytes; returns how many records went. Cheap when nothing is due."""
        now = time.time() if now is None else now
        old = self.log.older_than(self.folder, now - self.keep_days * DAY)
        if not old and _size(self.repo.git_dir) <= self.max_bytes:
            return 0
        dropped = 0
        async with folder_lock(self._lock_file):
            self.log.delete(old)
            dropped += len(old)
            await self._collect()
            while _size(self.repo.git_dir) > self.max_bytes:
                ids = [r.id for r in self.log.for_folder(self.folder)]
                if not ids:
                    break
                batch = ids[: max(1, len(ids) // 4)]
                self.log.delete(batch)
                dropped += len(batch)
                await self._collect()
        return dropped

    async def _collect(self) -> None:
        """Keep exactly the snapshots records need: the chain of HEAD is cut (HEAD becomes a
        root commit of the same tree), each needed snapshot gets a ref, the rest goes."""
        repo = self.repo
        if not (repo.git_dir / "HEAD").exists() or read_head(repo.git_dir) is None:
            return
        root = await repo.run("commit-tree", "HEAD^{tree}", "-m", "checkpoint")
        script = [f"update HEAD {root.decode().strip()}"]
        wanted = self.log.commits(self.folder)
        present = await repo.run("for-each-ref", "--format=%(refname)", "refs/keep/")
        for ref in present.decode().split():
            if ref.rsplit("/", 1)[-1] not in wanted:
                script.append(f"delete {ref}")
        script += [f"update refs/keep/{commit} {commit}" for commit in sorted(wanted)]
        await repo.run("update-ref", "--stdin", stdin=("\n".join(script) + "\n").encode())
        await repo.run("gc", "--prune=now", "--quiet")


def _size(folder: Path) -> int:
    total = 0
    for path in folder.rglob("*"):
        with contextlib.suppress(OSError):
            if path.is_file():
                total += path.stat().st_size
    return total
