"""A session's loop events as change records: small JSON objects a view applies in order.

These stand in until the thread model's changes replace them; the host numbers and
serves any records alike (changes.py), so only this module changes then.
"""

from __future__ import annotations

from typing import Any, assert_never

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantReasoning,
    AssistantText,
    ContextNotice,
    HistoryBranched,
    HistoryRepaired,
    LegFinished,
    LegStarted,
    LoopEvent,
    MessageAdded,
    Retrying,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.host.changes import Record

# A turn ends with one of these; a session whose last record is none of them after a
# `turn` record was mid-turn.
TURN_ENDS = ("turn_end",)
DELTAS = ("text", "reasoning")


def _call(call: ToolCall) -> dict[str, Any]:
    return {"id": call.id, "name": call.name, "arguments": call.arguments}


def record_of(event: LoopEvent) -> Record | None:
    """The change record of one loop event; None for events a view need not see."""
    match event:
        case AssistantText(text=text):
            return {"type": "text", "text": text}
        case AssistantReasoning(text=text):
            return {"type": "reasoning", "text": text}
        case MessageAdded(message=message):
            return {"type": "message", "message": message.to_json()}
        case ToolCallRequested(call=call):
            return {"type": "call", **_call(call)}
        case ToolCallStarted(call=call, allowed_by=allowed_by):
            return {"type": "call_started", "id": call.id, "allowed_by": allowed_by}
        case ToolCallFinished(call=call, status=status, content=content):
            return {"type": "call_finished", "id": call.id, "status": status, "content": content}
        case ApprovalNeeded(request=request):
            return approval_record(request.call, request.judgement.reason, request.source)
        case LegStarted(leg=leg, attempt=attempt):
            return {"type": "leg", "leg": leg, "attempt": attempt}
        case LegFinished(leg=leg, usage=usage):
            return {"type": "leg_end", "leg": leg, "usage": usage.to_json() if usage else None}
        case TurnFinished(legs=legs, usage=usage):
            return {"type": "turn_end", "outcome": "done", "legs": legs, "usage": usage.to_json()}
        case TurnFailed(message=message):
            return {"type": "turn_end", "outcome": "failed", "message": message}
        case TurnCancelled():
            return {"type": "turn_end", "outcome": "cancelled"}
        case Retrying(attempt=attempt, delay=delay, reason=reason):
            line = f"retrying in {delay:.0f}s after: {reason} (try {attempt})"
            return {"type": "notice", "level": "info", "text": line}
        case ContextNotice(text=text, level=level):
            return {"type": "notice", "level": level, "text": text}
        case HistoryRepaired(repair=repair):
            return {"type": "repaired", "added_results": list(repair.added_results)}
        case HistoryBranched(messages=messages, reason=reason, note=note):
            return {"type": "history", "reason": reason, "note": note,
                    "messages": [m.to_json() for m in messages]}  # fmt: skip
        case _:
            assert_never(event)


def approval_record(call: ToolCall, reason: str, source: str) -> Record:
    return {"type": "approval", **_call(call), "reason": reason, "source": source}


def merge_records(earlier: Record, later: Record) -> Record | None:
    """Consecutive text (or reasoning) deltas of one frame become one record."""
    kind = later.get("type")
    if kind in DELTAS and earlier.get("type") == kind:
        return {"type": kind, "text": earlier["text"] + later["text"]}
    return None
