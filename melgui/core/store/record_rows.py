"""The store's plans, pins and plan mode, wire log chunks, notes, and the metadata an
import puts back."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Iterable, Sequence
from contextlib import AbstractContextManager

from melgui.core.protocol.events import WireEntry
from melgui.core.store.records import NoteRecord, PinRecord, PlanRecord, WireRecord


class RecordRows:
    """Plans, plan mode, the wire log and notes of a conversation.

    A part of Store (melgui.core.store.store), which provides the connection and clock.
    """

    _conn: sqlite3.Connection
    _clock: Callable[[], float]

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        raise NotImplementedError  # Store's

    def add_plan(
        self,
        cid: str,
        title: str,
        markdown: str,
        *,
        call_id: str | None = None,
        created_at: float | None = None,
    ) -> None:
        self._conn.execute(
            "INSERT INTO plans (conversation_id, call_id, title, markdown, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (cid, call_id, title, markdown, self._clock() if created_at is None else created_at),
        )

    def plans(self, cid: str) -> list[PlanRecord]:
        rows = self._conn.execute(
            "SELECT title, markdown, created_at, call_id FROM plans WHERE conversation_id = ?"
            " ORDER BY id",
            (cid,),
        )
        return [PlanRecord(*row) for row in rows]

    def set_pins(self, cid: str, pins: Sequence[tuple[str, str]]) -> None:
        """The conversation's pinned facts are now `pins`, (text, pinned by) in order."""
        now = self._clock()
        with self.transaction():
            self._conn.execute("DELETE FROM pins WHERE conversation_id = ?", (cid,))
            self._conn.executemany(
                "INSERT INTO pins (conversation_id, seq, text, pinned_by, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                [(cid, seq, text, by, now) for seq, (text, by) in enumerate(pins)],
            )

    def pins(self, cid: str) -> list[PinRecord]:
        rows = self._conn.execute(
            "SELECT text, pinned_by FROM pins WHERE conversation_id = ? ORDER BY seq",
            (cid,),
        )
        return [PinRecord(*row) for row in rows]

    def set_plan_mode(self, cid: str, on: bool) -> None:
        self._conn.execute("UPDATE conversations SET plan_mode = ? WHERE id = ?", (int(on), cid))

    def plan_mode(self, cid: str) -> bool:
        """Whether the conversation was in plan mode when last recorded."""
        row = self._conn.execute(
            "SELECT plan_mode FROM conversations WHERE id = ?", (cid,)
        ).fetchone()
        return bool(row and row[0])

    def add_wire(self, cid: str, entries: Iterable[tuple[int, WireEntry]]) -> None:
        """Append wire log lines, each with its leg number, in one commit."""
        self.add_wire_rows(cid, [(leg, e.direction, e.text, e.at) for leg, e in entries])

    def add_wire_chunk(self, cid: str, leg: int, entries: Sequence[WireEntry]) -> None:
        """Append one leg's wire log lines as one stored chunk (the journal's fast path)."""
        data = encode_chunk(entries)
        self._conn.execute(
            "INSERT INTO wire_chunks (conversation_id, leg, entries) VALUES (?, ?, ?)",
            (cid, leg, data),
        )

    def add_wire_rows(self, cid: str, rows: Sequence[tuple[int, str, str, float]]) -> None:
        """Append (leg, direction, text, at) rows: one stored chunk per leg, one commit."""
        chunks: list[tuple[int, list[tuple[str, str, float]]]] = []
        for leg, direction, text, at in rows:
            if not chunks or chunks[-1][0] != leg:
                chunks.append((leg, []))
            chunks[-1][1].append((direction, text, at))
        with self.transaction() as conn:
            conn.executemany(
                "INSERT INTO wire_chunks (conversation_id, leg, entries) VALUES (?, ?, ?)",
                ((cid, leg, json.dumps(entries)) for leg, entries in chunks),
            )

    def restore_metadata(
        self,
        cid: str,
        *,
        title: str,
        title_custom: bool,
        updated_at: float,
        message_times: Sequence[float],
    ) -> None:
        """Put back the title and times an import carries (writes would have changed them)."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE conversations SET title = ?, title_custom = ?, updated_at = ? WHERE id = ?",
                (title, int(title_custom), updated_at, cid),
            )
            conn.executemany(
                "UPDATE messages SET created_at = ? WHERE conversation_id = ? AND seq = ?",
                ((at, cid, seq) for seq, at in enumerate(message_times)),
            )

    def wire_log(self, cid: str, leg: int | None = None) -> list[WireRecord]:
        sql = "SELECT leg, entries FROM wire_chunks WHERE conversation_id = ?"
        params: list[object] = [cid]
        if leg is not None:
            sql += " AND leg = ?"
            params.append(leg)
        return [
            WireRecord(chunk_leg, str(direction), str(text), at)
            for chunk_leg, entries in self._conn.execute(sql + " ORDER BY id", params)
            for direction, text, at in decode_chunk(entries)
        ]

    def add_note(self, cid: str, kind: str, text: str, *, at: float | None = None) -> None:
        self._conn.execute(
            "INSERT INTO notes (conversation_id, kind, text, at) VALUES (?, ?, ?, ?)",
            (cid, kind, text, self._clock() if at is None else at),
        )

    def notes(self, cid: str) -> list[NoteRecord]:
        rows = self._conn.execute(
            "SELECT kind, text, at FROM notes WHERE conversation_id = ? ORDER BY id", (cid,)
        )
        return [NoteRecord(*row) for row in rows]


_SEPARATOR = "\x1e"  # between the texts of a chunk's lines (ASCII's record separator)


def encode_chunk(entries: Sequence[WireEntry]) -> str:
    """A chunk as one line of JSON (each line's direction, and its time in whole
    microseconds after the first's), then the lines' texts joined by `_SEPARATOR`.

    Encoding 20,000 lines a long answer is the journal's largest cost: JSON-escaping
    each text, or a float time per line, costs more than the texts themselves. A text
    that holds the separator sends the chunk's texts into the JSON.
    """
    start = entries[0].at if entries else 0.0
    header: dict[str, object] = {
        "start": start,
        "direction": [e.direction for e in entries],
        "us": [round((e.at - start) * 1e6) for e in entries],
    }
    texts = _SEPARATOR.join([e.text for e in entries])
    if texts.count(_SEPARATOR) != max(len(entries) - 1, 0):
        header["text"] = [e.text for e in entries]
        texts = ""
    return json.dumps(header, ensure_ascii=False) + "\n" + texts


def decode_chunk(data: str) -> list[tuple[str, str, float]]:
    """(direction, text, at) of a stored chunk: `encode_chunk`'s, or a list of
    [direction, text, at] as older versions and imports store it."""
    if data.startswith("["):
        return [(direction, text, float(at)) for direction, text, at in json.loads(data)]
    line, _, texts = data.partition("\n")  # JSON keeps a newline in a string escaped
    header = json.loads(line)
    directions = header["direction"]
    text = header.get("text")
    if text is None:
        text = texts.split(_SEPARATOR) if directions else []
    start = float(header["start"])
    times = [start + us / 1e6 for us in header["us"]]
    return list(zip(directions, text, times, strict=True))
