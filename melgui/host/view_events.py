"""What a view makes of a session's records: its copy of the thread (ThreadCopy, from the
thread's own `change` records), and the host's own records back into the loop's events,
for the parts of a view that read loop events (the window's approval queue, the
conversation's mirror, a turn's end); what a view draws comes from its copy of the thread.
And its copy of the loop's facts (LoopFacts: model, role, plan mode, what waits), and of
the preview before a compaction waiting there (PreviewCopy).

    copy = ThreadCopy(on_answer=send)
    copy.restart(snapshot_from_json(part["thread"]))   # from an attach's snapshot (Thread's)
    copy.take(record)                                   # each `change` record after it

`take` skips a change it already has (a snapshot taken again overlaps the batches in
flight) and raises SeqGap for one that does not follow: the view asks for a snapshot.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import replace
from typing import Any

from melgui.core.agent.plan_mode import PlanMode
from melgui.core.context.preview import CompactionQuestion, question_from_json
from melgui.core.protocol.approval import AgentOption, ApprovalRequest
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
from melgui.core.worktrees.overlap.touched import Touched, touched_from_json
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
    what waits, the tokens it used so far (`usage`, as its last turn's end said), its
    worker's worktree as the host last read it (`worktree_files`: which files it changed,
    hunk by hunk; None until read, or for none). A view that sets the model, the role or
    plan mode sets them in the host too (`send`); what the host says is `heard`, and not
    sent back."""

    def __init__(self, model: str, cwd: str) -> None:
        self.cwd = cwd
        self.usage = Usage()
        self.worktree_files: Touched | None = None
        self._on_files: list[Callable[[], None]] = []
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

    def on_worktree_files(self, listener: Callable[[], None]) -> Callable[[], None]:
        """`listener()` hears each new reading of the worktree (the agents board)."""
        self._on_files.append(listener)
        return lambda: self._on_files.remove(listener) if listener in self._on_files else None

    def read_there(self, data: Any) -> None:
        """The host's reading of the worktree (a `worktree_files` record's `touched`, a
        snapshot's `worktree_files`; None: none, or git could not tell)."""
        try:
            touched = None if data is None else touched_from_json(data)
        except ValueError:
            touched = None
        if touched != self.worktree_files:
            self.worktree_files = touched
            for listener in list(self._on_files):
                listener()


class PreviewCopy:
    """A view's copy of the preview before a compaction the host waits on (`question`,
    its id there): shown by whoever follows the session (`on_question`), its answer sent
    once (`send`), unless the view leaves it to the next (`held`: Keep running in the
    background); gone, with nothing sent, when the host's goes (another view answered it,
    the turn stopped, the host ended)."""

    def __init__(
        self,
        send: Callable[[str, frozenset[int] | None], None],
        held: Callable[[], bool] = lambda: False,
    ) -> None:
        self.question: CompactionQuestion | None = None
        self.id = ""
        self.on_question: Callable[[CompactionQuestion], None] | None = None
        self._send = send
        self._held = held

    def asked(self, record: Record) -> None:
        """A `compaction` record (or a snapshot's): the question, shown."""
        question_id = str(record["id"])
        if question_id == self.id:  # in a snapshot and a batch both
            return
        self.over()
        question = question_from_json(record["question"])
        self.question, self.id = question, question_id
        question.future.add_done_callback(lambda f: self._answered(question_id, f))
        if self.on_question is not None:
            self.on_question(question)

    def _answered(self, question_id: str, future: asyncio.Future[frozenset[int] | None]) -> None:
        if question_id != self.id or self._held():
            return  # resolved by the host, or left to the next view
        self.question, self.id = None, ""
        self._send(question_id, future.result())

    def resolved(self, record: Record) -> None:
        """A `compaction_resolved` record: the host's question went."""
        if record.get("id") == self.id:
            self.over()

    def still(self, asked: list[Record]) -> None:
        """A snapshot's questions: one this copy holds that is not among them went."""
        if self.question is not None and self.id not in [a["id"] for a in asked]:
            self.over()

    def over(self) -> None:
        question, self.question, self.id = self.question, None, ""
        if question is not None:
            question.cancel()


def person_said(record: Record) -> bool:
    """A change record of a person's message (drawn with its place in the list first)."""
    change = record["change"]
    return bool(change["kind"] == "entry_added" and change["entry"].get("kind") == "user")


def replaced(record: Record) -> bool:
    """A change record of a new list of entries (a branch, a rewind), not a load."""
    change = record["change"]
    return bool(change["kind"] == "entries_replaced" and change.get("reason") != "load")


def request_of(record: Record, call: ToolCall, source: str) -> ApprovalRequest:
    """An `approval` record's question, as a view answers it (an ACP agent's carries its
    own options and the change it would make)."""
    options = tuple(AgentOption(*option) for option in record.get("options") or ())
    return ApprovalRequest(
        call, call.parsed or {}, source=source, judgement=judgement_of(record),
        options=options, preview=str(record.get("preview") or ""),
    )  # fmt: skip
