"""WireLog: the history's wire log. Each leg's lines (already redacted) as the server
and melgui exchanged them, kept in chunks of lines, one row per chunk."""

from __future__ import annotations

import base64
import json
import sqlite3
import sys
from array import array
from collections.abc import Iterable, Sequence
from operator import attrgetter

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

    def add_chunks(self, cid: str, leg: int, chunks: Sequence[Sequence[WireEntry]]) -> None:
        """Append one leg's chunks of wire log lines, a stored chunk each, in one commit
        (each encoded as it is inserted: the interpreter is held one chunk at a time)."""
        with transaction(self._conn) as conn:
            conn.executemany(
                "INSERT INTO wire_chunks (conversation_id, leg, entries) VALUES (?, ?, ?)",
                ((cid, leg, encode_chunk(entries)) for entries in chunks),
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
_CODES = {"request": "q", "response": "r", "event": "e", "note": "n"}  # one letter a line
_DIRECTIONS = {code: direction for direction, code in _CODES.items()}
_DIRECTION, _TEXT, _AT = attrgetter("direction"), attrgetter("text"), attrgetter("at")


def encode_chunk(entries: Sequence[WireEntry]) -> str:
    """A chunk as one line of JSON (each line's direction as one letter, and the lines'
    times as little-endian doubles in base64), then the lines' texts joined by
    `_SEPARATOR`.

    Encoding 20,000 lines a long answer is the journal's largest cost, on the writer
    thread but holding the GIL the loop needs: a Python step per line (JSON-escaping
    each text, rounding each time) costs more than the texts themselves, so every
    column is made by one C-level pass. A text that holds the separator, or a direction
    without a letter, sends that column into the JSON as a list.
    """
    times = array("d", list(map(_AT, entries)))  # from a list: array's fast path
    if sys.byteorder == "big":
        times.byteswap()
    header: dict[str, object] = {"v": 2, "at": base64.b64encode(times.tobytes()).decode("ascii")}
    directions = list(map(_DIRECTION, entries))
    first = directions[0] if directions else ""
    if first in _CODES and directions.count(first) == len(directions):
        header["direction"] = _CODES[first] * len(directions)  # a stream's: all "event"
    else:
        try:
            header["direction"] = "".join(map(_CODES.__getitem__, directions))
        except KeyError:
            header["directions"] = directions
    texts = _SEPARATOR.join(map(_TEXT, entries))
    if texts.count(_SEPARATOR) != max(len(entries) - 1, 0):
        header["text"] = list(map(_TEXT, entries))
        texts = ""
    return json.dumps(header, ensure_ascii=False) + "\n" + texts


def decode_chunk(data: str) -> list[tuple[str, str, float]]:
    """(direction, text, at) of a stored chunk: `encode_chunk`'s, the header with
    microseconds after a start that came before it, or a list of [direction, text, at]
    as the first versions and imports store it."""
    if data.startswith("["):
        return [(direction, text, float(at)) for direction, text, at in json.loads(data)]
    line, _, texts = data.partition("\n")  # JSON keeps a newline in a string escaped
    header = json.loads(line)
    if header.get("v") == 2:
        times = array("d", base64.b64decode(header["at"]))
        if sys.byteorder == "big":
            times.byteswap()
        directions: list[str] = (
            header["directions"]
            if "directions" in header
            else [_DIRECTIONS[code] for code in header["direction"]]
        )
        at: list[float] = times.tolist()
    else:
        directions = header["direction"]
        start = float(header["start"])
        at = [start + us / 1e6 for us in header["us"]]
    text = header.get("text")
    if text is None:
        text = texts.split(_SEPARATOR) if directions else []
    return list(zip(directions, text, at, strict=True))
