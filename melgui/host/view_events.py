"""What a view makes of a session's records: its copy of the thread (ThreadCopy, from the
thread's own `change` records), and the host's own records back into the loop's events,
for the parts of a view that read loop events (the window's approval queue, the
conversation's mirror, a turn's end); what a view draws comes from its copy of the thread.
And its copy of the loop's facts (LoopFacts: model, role, plan mode, what waits).

    copy = ThreadCopy(on_answer=send)
    copy.restart(snapshot_from_json(part["thread"]))   # from an attach's snapshot (Thread's)
    copy.take(record)                                   # each `change` record after it

`take` skips a change it already has (a snapshot taken again overlaps the batches in
flight) and raises SeqGap for one that does not follow: the view asks for a snapshot.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from melgui.core.agent.plan_mode import PlanMode
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.events import ToolCall, Usage
from melgui.core.protocol.judgement import ASK
from melgui.core.protocol.loop_events import (
    ContextNotice,
    LoopEvent,
    MessageAdded,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Message
from melgui.core.thread.codec import change_from_json
from melgui.core.thread.thread import Thread
from melgui.host.changes import Record


class ThreadCopy(Thread):
    """A view's copy of a host session's thread: the thread's own changes, as the host
    sends them (JSON), applied in order; a run of text the host merged into one change
    counts as the run's numbers."""

    def take(self, record: dict[str, Any]) -> bool:
        """Apply one `change` record; False when it was already applied."""
        change = change_from_json(record["change"])
        first = int(record.get("first", change.seq))
        if change.seq <= self.seq:
            return False
        self.apply(change, first=first)  # a merged run: its last number
        return True


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
        """The event a host record stands for, for the views that still read loop events
        (the conversation's mirror, the turn's end, notices); None for the thread's
        changes (the copy applies those) and the records the session handles itself."""
        kind = record.get("type")
        if kind == "message":
            return MessageAdded(Message.from_json(record["message"]))
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


class LoopFacts:
    """What views read of a session's loop: its model, role and folder, its plan mode,
    what waits, the tokens it used so far (`usage`, as its last turn's end said). A view
    that sets the model, the role or plan mode sets them in the host too (`send`); what
    the host says is `heard`, and not sent back."""

    def __init__(self, model: str, cwd: str) -> None:
        self.cwd = cwd
        self.usage = Usage()
        self.waiting: dict[str, ApprovalRequest] = {}
        self.plan = PlanMode()
        self.send: Callable[[dict[str, Any]], None] = lambda _settings: None
        self._said: dict[str, Any] = {"model": model, "role": "assistant", "plan": False}
        self.plan.subscribe(lambda on: self._set("plan", on))

    @property
    def model(self) -> str:
        return str(self._said["model"])

    @model.setter
    def model(self, model: str) -> None:
        self._set("model", model)

    @property
    def role(self) -> str:
        return str(self._said["role"])

    @role.setter
    def role(self, role: str) -> None:
        self._set("role", role)

    def heard(self, described: dict[str, Any]) -> None:
        """The host's word (`session/open`, `session/list`): taken, not sent back."""
        for name in ("model", "role", "plan"):
            if described.get(name) not in (None, ""):
                self._said[name] = described[name]
        self.plan.on = bool(self._said["plan"])

    def _set(self, name: str, value: Any) -> None:
        if value == self._said[name] or (name != "plan" and not value):
            return  # the same, or no model or role at all
        self._said[name] = value
        self.send({name: value})

    def pending_approvals(self) -> list[ApprovalRequest]:
        return [request for request in self.waiting.values() if request.pending]
