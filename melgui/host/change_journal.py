"""The host's journal of numbered changes and of the sessions it had open, in SQLite
beside the history (`host.sqlite` in the data folder).

A view that reattaches after memory let go of what it missed reads it here; a host
started after a crash continues each session's numbers from here, so a number is never
given twice, and reopens the sessions that were open. A session a window took over when
its host died and no new one could start (`taken`) is the window's from then on: no host
reopens it (its conversation is in the history, where the window goes on recording it).
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melgui.core.config.redaction import hide_secrets
from melgui.core.config.settings import data_dir

JOURNAL_FILE = "host.sqlite"
# A session row's `open`: closed (0), open (1: a new host reopens it), taken by a window (2).
CLOSED, OPEN, TAKEN = 0, 1, 2

SCHEMA = """
CREATE TABLE IF NOT EXISTS changes (
    session TEXT NOT NULL,
    seq INTEGER NOT NULL,
    record TEXT NOT NULL,
    PRIMARY KEY (session, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    folder TEXT NOT NULL,
    conversation TEXT,
    model TEXT NOT NULL,
    role TEXT NOT NULL,
    settings TEXT NOT NULL,
    open INTEGER NOT NULL DEFAULT 1  -- CLOSED, OPEN or TAKEN
);
"""


@dataclass(frozen=True)
class SessionRow:
    id: str
    folder: str
    conversation: str | None
    model: str
    role: str
    settings: dict[str, Any]


class ChangeJournal:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=NORMAL")
        self._db.executescript(SCHEMA)
        # Keys views sent (Host.hide): no record is written with one in it.
        self.secrets: tuple[str, ...] = ()

    def append(self, session: str, numbered: Iterable[dict[str, Any]]) -> None:
        rows = [(session, r["seq"], self._text(r)) for r in numbered]
        with self._db:
            self._db.execute("BEGIN")
            self._db.executemany("INSERT INTO changes VALUES (?, ?, ?)", rows)

    def _text(self, record: dict[str, Any]) -> str:
        text = json.dumps(record, ensure_ascii=False)
        return hide_secrets(text, self.secrets) if self.secrets else text

    def since(self, session: str, seq: int) -> list[dict[str, Any]]:
        rows = self._db.execute(
            "SELECT record FROM changes WHERE session = ? AND seq > ? ORDER BY seq",
            (session, seq),
        )
        return [json.loads(record) for (record,) in rows]

    def last(self, session: str) -> dict[str, Any] | None:
        row = self._db.execute(
            "SELECT record FROM changes WHERE session = ? ORDER BY seq DESC LIMIT 1", (session,)
        ).fetchone()
        return json.loads(row[0]) if row else None

    def last_of_type(self, session: str, types: tuple[str, ...]) -> dict[str, Any] | None:
        """The latest record of one of these types (a linear scan from the end)."""
        rows = self._db.execute(
            "SELECT record FROM changes WHERE session = ? ORDER BY seq DESC", (session,)
        )
        for (record,) in rows:
            data = json.loads(record)
            if data.get("type") in types:
                return data
        return None

    def last_seq(self, session: str) -> int:
        row = self._db.execute(
            "SELECT MAX(seq) FROM changes WHERE session = ?", (session,)
        ).fetchone()
        return int(row[0] or 0)

    # -- sessions ------------------------------------------------------------------------

    def opened(self, row: SessionRow) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO sessions VALUES (?, ?, ?, ?, ?, ?, 1)",
            (row.id, row.folder, row.conversation, row.model, row.role, json.dumps(row.settings)),
        )

    def closed(self, session: str) -> None:
        self._db.execute("UPDATE sessions SET open = ? WHERE id = ?", (CLOSED, session))

    def taken(self, session: str, record: dict[str, Any]) -> bool:
        """A window took the open `session` over from a dead host and runs it itself: no
        host reopens it, and its changes end with `record` (numbered here: a reader of the
        journal sees why it stopped). False when it was not open (closed, or taken)."""
        with self._db:
            self._db.execute("BEGIN IMMEDIATE")
            changed = self._db.execute(
                "UPDATE sessions SET open = ? WHERE id = ? AND open = ?", (TAKEN, session, OPEN)
            ).rowcount
            if changed:
                seq = self.last_seq(session) + 1
                numbered = {"seq": seq, **record}
                self._db.execute(
                    "INSERT INTO changes VALUES (?, ?, ?)", (session, seq, self._text(numbered))
                )
        return bool(changed)

    def state(self, session: str) -> int | None:
        """CLOSED, OPEN or TAKEN; None for a session this journal never had."""
        row = self._db.execute("SELECT open FROM sessions WHERE id = ?", (session,)).fetchone()
        return int(row[0]) if row else None

    def open_sessions(self) -> list[SessionRow]:
        rows = self._db.execute(
            "SELECT id, folder, conversation, model, role, settings FROM sessions WHERE open = ?",
            (OPEN,),
        )
        return [SessionRow(a, b, c, d, e, json.loads(f)) for a, b, c, d, e, f in rows]

    def close(self) -> None:
        self._db.close()


def journal_path() -> Path:
    """This user's host journal, in the data folder (the host's and its windows')."""
    return data_dir() / JOURNAL_FILE


def take_over(sessions: list[str], by: str) -> list[str]:
    """Mark `sessions` as taken by a window (`by` says which, for a reader of the journal)
    in this user's journal, so that no host started later reopens them: the window goes
    on with them itself. Returns the ones marked. Blocking (SQLite): run it in a thread."""
    journal = ChangeJournal(journal_path())
    try:
        record = {"type": "taken", "by": by}
        return [session for session in sessions if journal.taken(session, record)]
    finally:
        journal.close()
