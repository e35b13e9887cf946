"""WireLog: the history's wire log. Each leg's lines (already redacted) as the server
and melgui exchanged them, kept in chunks of lines, one row per chunk."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterable, Sequence

from melgui.core.protocol.events import WireEntry
from melgui.core.store.database import transaction
from melgui.core.store.records import WireRecord


class WireLog:
    """The wire log of one open history (`store.wire`), on the store's connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self._conn = conn

    def add(self, cid: str, entries: Iterable[tuple[int, WireEntry]]) -> None:
        """Append wire log lines, each with its leg number, in one commit."""
        self.add_rows(cid, [(leg, e.direction, e.text, e.at) for leg, e in entries])

    def add_chunk(self, cid: str, leg: int, entries: Sequence[WireEntry]) -> None:
        """Append one leg's wire log lines as one stored chunk (the journal's fast path)."""
        data = json.dumps([(e.direction, e.text, e.at) for e in entries], ensure_ascii=False)
        self._conn.execute(
            "INSERT INTO wire_chunks (conversation_id, leg, entries) VALUES (?, ?, ?)",
            (cid, leg, data),
        )

    def add_rows(self, cid: str, rows: Sequence[tuple[int, str, str, float]]) -> None:
        """Append (leg, direction, text, at) rows: one stored chunk per leg, one commit."""
        chunks: list[tuple[int, list[tuple[str, str, float]]]] = []
        for leg, direction, text, at in rows:
            if not chunks or chunks[-1][0] != leg:
                chunks.append((leg, []))
            chunks[-1][1].append((direction, text, at))
        with transaction(self._conn) as conn:
            conn.executemany(
                "INSERT INTO wire_chunks (conversation_id, leg, entries) VALUES (?, ?, ?)",
                ((cid, leg, json.dumps(entries)) for leg, entries in chunks),
            )

    def read(self, cid: str, leg: int | None = None) -> list[WireRecord]:
        sql = "SELECT leg, entries FROM wire_chunks WHERE conversation_id = ?"
        params: list[object] = [cid]
        if leg is not None:
            sql += " AND leg = ?"
            params.append(leg)
        return [
            WireRecord(chunk_leg, str(direction), str(text), float(at))
            for chunk_leg, entries in self._conn.execute(sql + " ORDER BY id", params)
            for direction, text, at in json.loads(entries)
        ]
