"""The index of checkpoints, in the history database (table `checkpoints`, schema v6).

A record is written before the call runs ("running", with its pre-call snapshot) and
completed when the result arrives ("done", with the files it changed). A record still
"running" when melgui starts again was cut short (a kill): it reads as "interrupted".
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from melgui.core.store.checkpoints.changes import FileChange
from melgui.core.store.database import open_database

State = Literal["running", "done", "interrupted"]
_COLUMNS = (
    "id, folder, source, call_id, tool, summary, before_commit, after_commit, state, files,"
    " skipped, restores, started_at, finished_at"
)


@dataclass(frozen=True)
class CheckpointRecord:
    id: int
    folder: str
    source: str
    call_id: str
    tool: str
    summary: str
    before: str
    after: str | None
    state: State
    files: tuple[FileChange, ...]
    skipped: tuple[str, ...]
    restores: tuple[int, ...]  # for a restore: the checkpoints it undid
    started_at: float
    finished_at: float | None

    @property
    def is_restore(self) -> bool:
        return self.tool == "restore"


class CheckpointLog:
    """Reads and writes checkpoint records; one connection of its own, commit per call."""

    def __init__(self, conn: sqlite3.Connection, notice: str | None = None) -> None:
        self._conn = conn
        self.notice = notice

    @classmethod
    def open(cls, database: Path) -> CheckpointLog:
        opened = open_database(database)
        return cls(opened.conn, opened.notice)

    def close(self) -> None:
        self._conn.close()

    def begin(
        self, folder: str, source: str, call_id: str, tool: str, summary: str, before: str
    ) -> int:
        cursor = self._conn.execute(
            "INSERT INTO checkpoints (folder, source, call_id, tool, summary, before_commit,"
            " state, started_at) VALUES (?, ?, ?, ?, ?, ?, 'running', ?)",
            (folder, source, call_id, tool, summary, before, time.time()),
        )
        assert cursor.lastrowid is not None
        return cursor.lastrowid

    def finish(
        self,
        record_id: int,
        after: str,
        files: list[FileChange],
        skipped: tuple[str, ...],
        restores: tuple[int, ...] = (),
    ) -> None:
        self._conn.execute(
            "UPDATE checkpoints SET after_commit = ?, state = 'done', files = ?, skipped = ?,"
            " restores = ?, finished_at = ? WHERE id = ?",
            (
                after,
                json.dumps([change.to_json() for change in files]),
                json.dumps(list(skipped)),
                json.dumps(list(restores)),
                time.time(),
                record_id,
            ),
        )

    def mark_interrupted(self, record_id: int) -> None:
        self._conn.execute(
            "UPDATE checkpoints SET state = 'interrupted' WHERE id = ?", (record_id,)
        )

    def get(self, record_id: int) -> CheckpointRecord | None:
        row = self._conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE id = ?", (record_id,)
        ).fetchone()
        return _record(row) if row else None

    def for_folder(self, folder: str, *, since: int = 0) -> list[CheckpointRecord]:
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE folder = ? AND id > ? ORDER BY id",
            (folder, since),
        ).fetchall()
        return [_record(row) for row in rows]

    def restores_after(self, folder: str, record_id: int) -> list[CheckpointRecord]:
        """The restores taken in `folder` after checkpoint `record_id`, oldest first."""
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE folder = ? AND tool = 'restore'"
            " AND id > ? ORDER BY id",
            (folder, record_id),
        ).fetchall()
        return [_record(row) for row in rows]

    def running(self, folder: str) -> list[CheckpointRecord]:
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE folder = ? AND state = 'running'"
            " ORDER BY id",
            (folder,),
        ).fetchall()
        return [_record(row) for row in rows]

    def for_calls(self, folder: str, call_ids: list[str]) -> list[CheckpointRecord]:
        """The checkpoints of these calls in `folder`, oldest first."""
        if not call_ids:
            return []
        marks = ",".join("?" * len(call_ids))
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints WHERE folder = ? AND call_id IN ({marks})"
            " ORDER BY id",
            (folder, *call_ids),
        ).fetchall()
        return [_record(row) for row in rows]

    def for_conversation(self, conversation_id: str) -> list[CheckpointRecord]:
        """The checkpoints of a stored conversation's calls: same call id, same folder, and
        taken after the call was requested (servers that reuse ids stay apart)."""
        rows = self._conn.execute(
            f"SELECT {_COLUMNS} FROM checkpoints c WHERE EXISTS (SELECT 1 FROM tool_calls t"
            " WHERE t.conversation_id = ? AND t.call_id = c.call_id"
            " AND c.started_at >= t.requested_at"
            " AND (t.finished_at IS NULL OR c.started_at <= t.finished_at))"
            " AND folder = (SELECT folder FROM conversations WHERE id = ?) ORDER BY id",
            (conversation_id, conversation_id),
        ).fetchall()
        return [_record(row) for row in rows]

    def older_than(self, folder: str, cutoff: float) -> list[int]:
        rows = self._conn.execute(
            "SELECT id FROM checkpoints WHERE folder = ? AND started_at < ? ORDER BY id",
            (folder, cutoff),
        ).fetchall()
        return [int(row[0]) for row in rows]

    def delete(self, record_ids: list[int]) -> None:
        self._conn.executemany("DELETE FROM checkpoints WHERE id = ?", [(i,) for i in record_ids])

    def commits(self, folder: str) -> set[str]:
        """Every snapshot a record of `folder` still needs."""
        rows = self._conn.execute(
            "SELECT before_commit, after_commit FROM checkpoints WHERE folder = ?", (folder,)
        ).fetchall()
        return {c for row in rows for c in row if c}


def _record(row: tuple[object, ...]) -> CheckpointRecord:
    state = str(row[8])
    return CheckpointRecord(
        id=int(str(row[0])),
        folder=str(row[1]),
        source=str(row[2]),
        call_id=str(row[3]),
        tool=str(row[4]),
        summary=str(row[5]),
        before=str(row[6]),
        after=str(row[7]) if row[7] is not None else None,
        state="done" if state == "done" else "running" if state == "running" else "interrupted",
        files=tuple(FileChange.from_json(item) for item in json.loads(str(row[9]))),
        skipped=tuple(json.loads(str(row[10]))),
        restores=tuple(int(i) for i in json.loads(str(row[11]))),
        started_at=float(str(row[12])),
        finished_at=float(str(row[13])) if row[13] is not None else None,
    )
