"""Every tool call of one session, with its status, duration, result and pending approval."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import Any

from PySide6.QtCore import QObject, Signal

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.call_life import AUTO_BY, CallPhase, decision_text, is_open
from melgui.core.protocol.calls import summarize
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    LoopEvent,
    MessageAdded,
    ToolCallFinished,
    ToolCallStarted,
)
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.result_parts import ResultPart
from melgui.core.protocol.tooling import HookRun
from melgui.core.store.records import ToolCallRecord
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
    """Built from the conversation, then kept current from the bridge's events."""

    added = Signal(str)  # call id
    changed = Signal(str)  # call id

    def __init__(self, bridge: SessionBridge, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.bridge = bridge
        self.records: dict[str, CallRecord] = {}
        self._leg = 0
        self.load(bridge.session.conversation)
        bridge.loopEvent.connect(self.on_event)

    def load(self, conversation: Conversation) -> None:
        self.records.clear()
        for message in conversation.messages:
            if message.role == "assistant":
                self._leg += 1
                for call in message.tool_calls:
                    self._add(call)
            elif message.role == "tool" and message.tool_call_id in self.records:
                record = self.records[message.tool_call_id]
                record.status = message.status or "ok"
                record.result = message.content

    def apply_stored(self, stored: Iterable[ToolCallRecord]) -> list[str]:
        """Take status, duration, decision and result from the store's records of a
        reopened conversation; returns the ids of the calls that changed."""
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
            changed.append(saved.call_id)
        return changed

    def get(self, call_id: str) -> CallRecord | None:
        return self.records.get(call_id)

    def pending(self) -> list[CallRecord]:
        return [r for r in self.records.values() if r.awaiting_person]

    def on_event(self, event: LoopEvent) -> None:
        match event:
            case MessageAdded(message=message) if message.role == "assistant":
                self._leg += 1
                for call in message.tool_calls:
                    self._add(call)
                    self.added.emit(call.id)
            case ApprovalNeeded(request=request):
                record = self._ensure(request.call)
                record.request = request
                record.arguments = request.arguments
                record.status = "waiting"
                request.future.add_done_callback(partial(self._decided, request.call.id))
                self.changed.emit(record.call.id)
            case ToolCallStarted(call=call, allowed_by=allowed_by):
                record = self._ensure(call)
                if allowed_by and not record.decision:  # the rule that let it run
                    record.decision = AUTO_BY + allowed_by
                record.status = "running"
                record.started_at = time.monotonic()
                self.changed.emit(call.id)
            case ToolCallFinished(call=call, status=status, content=content, duration=duration):
                record = self._ensure(call)
                record.status = status
                record.result = content
                record.duration = duration
                record.parts = event.parts
                record.hooks = event.hooks
                record.notes = event.notes
                self.changed.emit(call.id)
            case _:
                pass

    def _decided(self, call_id: str, future: object = None) -> None:
        # The buttons must go away as soon as anyone (this view, the queue) decided.
        record = self.records.get(call_id)
        if record is None:
            return
        if isinstance(future, asyncio.Future) and not future.cancelled():
            record.decision = decision_text(future.result())
        self.changed.emit(call_id)

    def _add(self, call: ToolCall) -> CallRecord:
        record = CallRecord(call, call.parsed, self.bridge.source, leg=self._leg)
        self.records[call.id] = record
        return record

    def _ensure(self, call: ToolCall) -> CallRecord:
        record = self.records.get(call.id)
        if record is None:
            record = self._add(call)
            self.added.emit(call.id)
        return record
