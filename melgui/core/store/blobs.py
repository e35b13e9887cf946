"""Images of messages, stored once by content hash (the `blobs` table).

A message row keeps its parts as JSON without the image bytes; the bytes live in
`blobs` under their SHA-256, so an image sent twice (or kept in a branch) is stored
once. An image over MAX_BLOB_BYTES is not stored: its part says so when read back.
"""

from __future__ import annotations

import base64
import json
import sqlite3
from typing import Any

from melgui.core.protocol.content import ImagePart
from melgui.core.protocol.messages import Message

MAX_BLOB_BYTES = 5 * 1024 * 1024


def put_parts(conn: sqlite3.Connection, message: Message, now: float) -> str:
    """Store the message's images; returns the parts column's JSON."""
    rows: list[dict[str, Any]] = []
    for part in message.parts:
        rows.append(part.to_json(with_data=False))
        if isinstance(part, ImagePart) and len(part.data) <= MAX_BLOB_BYTES:
            conn.execute(
                "INSERT OR IGNORE INTO blobs (sha256, mime, data, created_at) VALUES (?, ?, ?, ?)",
                (part.sha256, part.mime, part.data, now),
            )
    return json.dumps(rows)


def load_parts(conn: sqlite3.Connection, raw: object) -> list[dict[str, Any]]:
    """The parts column with each image's bytes filled back in (from_json form).

    An image whose bytes are not stored becomes a text note in place of the image."""
    parts = json.loads(str(raw)) if raw and raw != "[]" else []  # most have none
    loaded: list[dict[str, Any]] = []
    for part in parts if isinstance(parts, list) else ():
        if isinstance(part, dict) and part.get("type") == "image":
            row = conn.execute(
                "SELECT data FROM blobs WHERE sha256 = ?", (part.get("sha256"),)
            ).fetchone()
            if row is None:
                name = part.get("name") or "image"
                loaded.append(
                    {
                        "type": "file",
                        "path": str(name),
                        "text": "(image not kept in history: larger than the size cap)",
                    }
                )
                continue
            part = {**part, "data": base64.b64encode(bytes(row[0])).decode("ascii")}
        loaded.append(part)
    return loaded
