"""Change records back into the loop's events, for a view that draws them with the same
widgets an in-process session feeds (the chat view, the approval bar, the inspector)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from melgui.core.protocol.events import ToolCall, Usage
from melgui.core.protocol.judgement import ASK
from melgui.core.protocol.loop_events import (
    AssistantReasoning,
    AssistantText,
    ContextNotice,
    LegFinished,
    LegStarted,
    LoopEvent,
    MessageAdded,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Message
from melgui.host.changes import Record


class EventReader:
    """Reads one session's records in order; keeps the calls it has seen by id."""

    def __init__(self) -> None:
        self.calls: dict[str, ToolCall] = {}

    def call(self, record: Record) -> ToolCall:
        call_id = str(record["id"])
        known = self.calls.get(call_id)
        if known is None:
            known = ToolCall(call_id, str(record.get("name", "")), str(record.get("arguments", "")))
            self.calls[call_id] = known
        return known

    def event_of(self, record: Record) -> LoopEvent | None:
        """The event a record stands for; None for records that are the host's own
        (prompt, idle, approval, approval_resolved: the view's session handles those)."""
        kind = record.get("type")
        if kind == "text":
            return AssistantText(str(record["text"]))
        if kind == "reasoning":
            return AssistantReasoning(str(record["text"]))
        if kind == "message":
            return MessageAdded(Message.from_json(record["message"]))
        if kind == "call":
            return ToolCallRequested(self.call(record))
        if kind == "call_started":
            return ToolCallStarted(self.call(record), str(record.get("allowed_by", "")))
        if kind == "call_finished":
            status: Any = record.get("status", "error")
            return ToolCallFinished(self.call(record), status, str(record.get("content", "")), 0.0)
        if kind == "leg":
            return LegStarted(int(record["leg"]), int(record.get("attempt", 1)))
        if kind == "leg_end":
            usage = record.get("usage")
            return LegFinished(int(record["leg"]), Usage(**usage) if usage else None)
        if kind == "turn_end":
            return _turn_end(record)
        if kind in ("notice", "interrupted"):
            level: Any = record.get("level", "warning")
            return ContextNotice(str(record.get("text", "")), level)
        return None


def _turn_end(record: Record) -> LoopEvent:
    outcome = record.get("outcome")
    if outcome == "done":
        usage = record.get("usage")
        return TurnFinished(int(record.get("legs", 0)), Usage(**usage) if usage else Usage())
    if outcome == "cancelled":
        return TurnCancelled()
    return TurnFailed(str(record.get("message", "the turn failed")))


def judgement_of(record: Record) -> Any:
    return replace(ASK, reason=str(record.get("reason", "")))
