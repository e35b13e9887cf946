"""Checkpoint records as a host sends them to a window elsewhere, and what a call card
needs to know of one (whether a later restore undid it):

    sent = [record_to_json(r, undone_by(checkpoints, r)) for r in records]   # the host
    record, undo = record_from_json(sent[0])                                 # the window

A remote folder's checkpoints are its host's (melgui/host/tool_calls.py); the window
draws the same call-card links from these as from its own log.
"""

from __future__ import annotations

from typing import Any

from melgui.core.store.checkpoints.changes import FileChange
from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.log import CheckpointRecord


def undone_by(checkpoints: Checkpointer, record: CheckpointRecord) -> CheckpointRecord | None:
    """The restore that undid `record`, unless a later one undid that (redo), and so on
    along the chain of undos."""
    chain = {record.id}
    undo = None
    for restore in checkpoints.log.restores_after(checkpoints.folder, record.id):
        if chain & set(restore.restores):
            chain.add(restore.id)
            undo = restore if undo is None else None
    return undo


def record_to_json(record: CheckpointRecord, undo: CheckpointRecord | None) -> dict[str, Any]:
    """What a card shows of `record` (not its snapshots' commits: they stay there)."""
    sent = {
        "id": record.id, "call_id": record.call_id, "tool": record.tool,
        "summary": record.summary, "state": record.state, "source": record.source,
        "files": [change.to_json() for change in record.files],
        "skipped": list(record.skipped), "restores": list(record.restores),
        "started_at": record.started_at, "finished_at": record.finished_at,
    }  # fmt: skip
    sent["undone_by"] = record_to_json(undo, None) if undo is not None else None
    return sent


def record_from_json(
    data: dict[str, Any], folder: str = ""
) -> tuple[CheckpointRecord, CheckpointRecord | None]:
    """A record the host sent, and the restore that undid it (None: not undone)."""
    state = data.get("state")
    record = CheckpointRecord(
        id=int(data["id"]),
        folder=folder,
        source=str(data.get("source") or ""),
        call_id=str(data.get("call_id") or ""),
        tool=str(data.get("tool") or ""),
        summary=str(data.get("summary") or ""),
        before="",
        after=None if state == "running" else "",
        state="done" if state == "done" else "running" if state == "running" else "interrupted",
        files=tuple(FileChange.from_json(item) for item in data.get("files") or []),
        skipped=tuple(str(path) for path in data.get("skipped") or []),
        restores=tuple(int(i) for i in data.get("restores") or []),
        started_at=float(data.get("started_at") or 0.0),
        finished_at=None if data.get("finished_at") is None else float(data["finished_at"]),
    )
    undo = data.get("undone_by")
    return record, record_from_json(undo, folder)[0] if isinstance(undo, dict) else None
