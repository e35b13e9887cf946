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
        data = encode_chunk(entries)
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
            WireRecord(chunk_leg, str(direction), str(text), at)
            for chunk_leg, entries in self._conn.execute(sql + " ORDER BY id", params)
            for direction, text, at in decode_chunk(entries)
        ]


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
