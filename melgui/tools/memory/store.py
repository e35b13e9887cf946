"""The embedded project memory: SQLite, one row per note, keyed by the project's real root."""

from __future__ import annotations

import asyncio
import os
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

from melgui.core.protocol.tools.memory import MemoryNote, MemoryUnavailable, ProjectMemory

_SCHEMA = """
CREATE TABLE IF NOT EXISTS notes (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    project TEXT NOT NULL,
    note TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS notes_by_project ON notes (project, id);
"""


def project_key(cwd: str) -> str:
    """The canonical root: symlinks resolved, so two spellings of a folder share notes."""
    return os.path.realpath(cwd)


def _utc_now() -> datetime:
    return datetime.now(UTC)


class LocalMemory:
    """A ProjectMemory in one SQLite file; every call runs off the event loop."""

    def __init__(
        self, db_path: str | os.PathLike[str], *, clock: Callable[[], datetime] = _utc_now
    ) -> None:
        self.db_path = Path(db_path)
        self._clock = clock
        self._ready = False

    def _connect(self) -> sqlite3.Connection:
        if not self._ready:
            self.db_path.parent.mkdir(parents=True, exist_ok=True)
        connection = sqlite3.connect(self.db_path, timeout=10.0)
        if not self._ready:
            try:
                connection.executescript(_SCHEMA)
                connection.execute("PRAGMA journal_mode=WAL")
            except sqlite3.Error:
                connection.close()
                raise
            self._ready = True
        return connection

    def _insert(self, project: str, note: str) -> None:
        created = self._clock().astimezone(UTC).isoformat(timespec="seconds")
        connection = self._connect()
        try:
            with connection:
                connection.execute(
                    "INSERT INTO notes (project, note, created_at) VALUES (?, ?, ?)",
                    (project, note, created),
                )
        finally:
            connection.close()

    def _select(self, project: str) -> list[MemoryNote]:
        connection = self._connect()
        try:
            rows = connection.execute(
                "SELECT note, created_at FROM notes WHERE project = ? ORDER BY id", (project,)
            ).fetchall()
        finally:
            connection.close()
        return [MemoryNote(note, created_at) for note, created_at in rows]

    async def remember(self, cwd: str, note: str) -> None:
        await asyncio.to_thread(self._insert, project_key(cwd), note)

    async def recall(self, cwd: str) -> list[MemoryNote]:
        return await asyncio.to_thread(self._select, project_key(cwd))


class FallbackMemory:
    """`primary` (the relay's store) unless it has none for us; then `local`."""

    def __init__(self, primary: ProjectMemory, local: ProjectMemory) -> None:
        self.primary = primary
        self.local = local

    async def remember(self, cwd: str, note: str) -> None:
        try:
            await self.primary.remember(cwd, note)
        except MemoryUnavailable:
            await self.local.remember(cwd, note)

    async def recall(self, cwd: str) -> list[MemoryNote]:
        try:
            return await self.primary.recall(cwd)
        except MemoryUnavailable:
            return await self.local.recall(cwd)
