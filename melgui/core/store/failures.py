"""Where a conversation went wrong, placed among its messages again.

The journal keeps errors, retries and stops as notes (kinds "error", "retry",
"stopped"); each note sits after the messages stored before it, so a reopened
conversation and its export show them where they happened.
"""

from __future__ import annotations

import bisect
from collections.abc import Sequence

from melgui.core.store.records import NoteRecord, StoredMessage
from melgui.core.thread.reducer import STOPPED_TEXT

FAILURE_KINDS = ("error", "retry", "stopped")
__all__ = ["FAILURE_KINDS", "STOPPED_TEXT", "place_notes"]


def place_notes(
    stored: Sequence[StoredMessage], notes: Sequence[NoteRecord]
) -> list[tuple[int, NoteRecord]]:
    """(position, note) for each failure note: position = messages stored before it."""
    return place_notes_at([item.created_at for item in stored], notes)


def place_notes_at(
    times: Sequence[float], notes: Sequence[NoteRecord]
) -> list[tuple[int, NoteRecord]]:
    """`place_notes` from the messages' times alone (`times` in message order)."""
    return [
        (bisect.bisect_right(times, note.at), note) for note in notes if note.kind in FAILURE_KINDS
    ]


def markdown_line(note: NoteRecord) -> str:
    """A quoted line for the Markdown export."""
    label = {"error": "Error", "retry": "Retried", "stopped": "Stopped"}.get(note.kind, note.kind)
    text = " ".join(note.text.split())
    if note.kind == "stopped":
        return f"> **{label}** — {text.removeprefix('Stopped: ')}"
    return f"> **{label}** — {text}"
