"""Every tool call of one session, with its status, duration, result and pending approval."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from PySide6.QtCore import QObject, Signal

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.call_life import CallPhase, is_open
from melgui.core.protocol.calls import summarize
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import HookRun, ResultPart
from melgui.core.store.records import ToolCallRecord
from melgui.core.thread.changes import Change, EntryAdded, EntryChanged
from melgui.core.thread.entries import CallEntry
from melgui.core.thread.thread import Thread
from melgui.ui.runtime.bridge import SessionBridge


@dataclass
class CallRecord:
    call: ToolCall
    arguments: dict[str, Any] | None
    source: str
    status: CallPhase = "requested"
    leg: int = 0
    requested_at: float = field(default_factory=time.monotonic)
    started_at: float | None = None
    duration: float | None = None
    result: str = ""
    request: ApprovalRequest | None = None
    preview: str | None = None  # the diff of write_file / edit_file, once computed
    # "" (none needed or not yet), "auto", "approved", "approved:session",
    # "approved:saved" or "denied" — as the store keeps it.
    decision: str = ""
    parts: tuple[ResultPart, ...] = ()  # rich result parts (MCP), not kept in the store
    hooks: tuple[HookRun, ...] = ()  # the hooks that ran around it
    notes: tuple[str, ...] = ()  # what steps after it said (a language server's diagnostics)

    @property
    def summary(self) -> str:
        return summarize(self.call.name, self.arguments)

    @property
    def awaiting_person(self) -> bool:
        return self.request is not None and self.request.pending


class CallBook(QObject):
    """The calls of one session's thread, kept current from its changes."""

    added = Signal(str)  # call id
    changed = Signal(str)  # call id

    def __init__(self, bridge: SessionBridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.records: dict[str, CallRecord] = {}
        self.model: Thread = bridge.session.thread
        for entry in self.model.calls():
            self._take(entry)
        bridge.threadChange.connect(self.on_change)

    def apply_stored(self, stored: Iterable[ToolCallRecord]) -> list[str]:
        """Take status, duration, decision, result, hook runs and notes from the store's
        records of a reopened conversation; returns the ids of the calls that changed."""
        changed = []
        for saved in stored:
            record = self.records.get(saved.call_id)
            if record is None:
                continue
            if not is_open(saved.state):
                record.status = saved.state
            elif is_open(record.status):
                record.status = "interrupted"  # cut before it finished
            record.duration = saved.duration
            record.decision = saved.decision
            if saved.result is not None and not record.result:
                record.result = saved.result
            record.hooks = record.hooks or saved.hooks
            record.notes = record.notes or saved.notes
            changed.append(saved.call_id)
        return changed

    def get(self, call_id: str) -> CallRecord | None:
        return self.records.get(call_id)

    def pending(self) -> list[CallRecord]:
        return [r for r in self.records.values() if r.awaiting_person]

    def on_change(self, change: Change) -> None:
        match change:
            case EntryAdded(entry=CallEntry() as entry):
                self._take(entry)
                self.added.emit(entry.call_id)
            case EntryChanged(entry=CallEntry() as entry):
                self._take(entry)
                self.changed.emit(entry.call_id)
            case _:
                pass

    def _take(self, entry: CallEntry) -> CallRecord:
        """The record of a call as its entry says it is now."""
        call_id = entry.call_id
        record = self.records.get(call_id)
        if record is None:
            record = CallRecord(entry.call, entry.arguments, entry.origin.source, leg=entry.leg)
            self.records[call_id] = record
        if entry.phase == "running" and record.status != "running":
            record.started_at = time.monotonic()
        record.status = entry.phase
        record.arguments = entry.arguments
        if entry.question is not None:
            record.request = self.model.request(call_id)
        if entry.decision and entry.decision != "auto":  # bare "auto": no rule to name
            record.decision = entry.decision
        if entry.result is not None:
            record.result = entry.result.content
            record.parts = entry.result.parts
            record.duration = entry.timing.ran
            record.hooks = entry.hooks
            record.notes = entry.notes
        return record
