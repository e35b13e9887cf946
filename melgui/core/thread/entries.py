"""What a thread holds: one entry per thing a person sees in a conversation.

Entries are frozen values; a change replaces an entry whole (or appends streamed text to
it), so a view compares the old entry with the new one and a copy elsewhere (a window
attached to an agent host) stays the same by applying the same changes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal

from melgui.core.protocol.approval import AgentOption
from melgui.core.protocol.call_life import CallPhase, is_open
from melgui.core.protocol.events import ToolCall, Usage
from melgui.core.protocol.judgement import Judgement
from melgui.core.protocol.messages import Message, ResultStatus
from melgui.core.protocol.tooling import HookRun, ResultPart

OriginKind = Literal["main", "worker", "mcp", "acp"]


@dataclass(frozen=True, slots=True)
class Origin:
    """Where a call comes from: the main conversation, a worker's pane, an MCP server's
    tool (`name`: the server), or an ACP agent hosted in a pane (`name`: the agent).
    `source` is the conversation that asked: "main" or the pane's title."""

    kind: OriginKind = "main"
    name: str = ""
    source: str = "main"


MAIN = Origin()


@dataclass(frozen=True, slots=True)
class Question:
    """A call waiting for a person (as Zed keeps WaitingForConfirmation in the call's
    status). The answer goes through `Thread.answer(call_id, decision)`; the draft is the
    deny reason being typed, one per pending call, whichever box it is typed in."""

    options: tuple[AgentOption, ...] = ()  # an ACP agent's own answers
    draft: str = ""
    preview: str = ""  # the change as a unified diff, when the asker already has it


@dataclass(frozen=True, slots=True)
class CallResult:
    status: ResultStatus
    content: str
    parts: tuple[ResultPart, ...] = ()


@dataclass(frozen=True, slots=True)
class Timing:
    ran: float = 0.0  # seconds the call ran, after any wait for approval
    waited: float = 0.0  # seconds it waited for the person's answer


NOT_TIMED = Timing()  # one for every entry not timed yet (a reopened conversation's 4,000)


@dataclass(frozen=True, slots=True)
class UserEntry:
    id: str
    message: Message  # its text, images and attached files
    kind: Literal["user"] = "user"

    @property
    def text(self) -> str:
        return self.message.content


@dataclass(frozen=True, slots=True)
class AssistantEntry:
    """The model's answer in one leg; `streaming` until the leg's message is in, then
    `message` is that message whole (its text, reasoning and calls), as later legs send
    it. Every assistant message has one: a leg that only called tools has one with no
    text."""

    id: str
    text: str
    streaming: bool = False
    leg: int = 0
    message: Message | None = None
    kind: Literal["assistant"] = "assistant"


@dataclass(frozen=True, slots=True)
class ReasoningEntry:
    """The model's reasoning in one leg, streamed apart from its answer."""

    id: str
    text: str
    streaming: bool = False
    leg: int = 0
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class CallEntry:
    """One tool call's whole life: what was asked, what the policy made of it, the
    question to a person while it waits, how it was let through, its checkpoint, its
    result and its timing."""

    id: str
    call: ToolCall
    phase: CallPhase = "requested"
    arguments: dict[str, Any] | None = None  # decoded once; None: `problem` says why
    problem: str = ""
    judgement: Judgement | None = None
    question: Question | None = None
    # How it was let through, as the store keeps it: "auto", "auto:<rule>", "approved",
    # "approved:<scope>", "denied" ("" until decided; call_life.decision_label in words).
    decision: str = ""
    checkpoint: int | None = None  # the checkpoint record taken around it
    result: CallResult | None = None
    timing: Timing = NOT_TIMED
    origin: Origin = MAIN
    leg: int = 0
    hooks: tuple[HookRun, ...] = ()  # the hooks that ran before and after it
    notes: tuple[str, ...] = ()  # lines for its card from the steps after it (diagnostics)
    ran_with: dict[str, Any] | None = None  # the arguments it ran with, when a hook changed them
    reply: Message | None = None  # its result as later legs send it (a "tool" message)
    kind: Literal["call"] = "call"

    @property
    def call_id(self) -> str:
        return self.call.id

    @property
    def name(self) -> str:
        return self.call.name

    @property
    def open(self) -> bool:
        return is_open(self.phase)


NoteKind = Literal["retry", "repair", "context", "error", "stopped"]


@dataclass(frozen=True, slots=True)
class NoteEntry:
    """A line about the conversation, not from the model: a retry, a repaired history, a
    context notice, a failed or stopped turn."""

    id: str
    note: NoteKind
    text: str
    level: Literal["info", "warning"] = "info"
    attempt: int = 0  # retry: the attempt that failed
    delay: float = 0.0  # retry: seconds until the next
    status: int | None = None  # error: the HTTP status, when there was one
    kind: Literal["note"] = "note"


@dataclass(frozen=True, slots=True)
class PlanEntry:
    """A plan the agent wrote (write_plan), after the call that wrote it."""

    id: str
    title: str
    markdown: str
    call_id: str = ""
    kind: Literal["plan"] = "plan"


@dataclass(frozen=True, slots=True)
class BranchEntry:
    """Where the message list was replaced: a compaction, a rewind, an edit, a retry.
    The entries before it are the new list; `note` says what happened in a line."""

    id: str
    reason: str
    note: str = ""
    messages: int = 0  # how many messages the new list holds
    replaced: tuple[Message, ...] = ()  # the list before, as the model was sent it
    current: tuple[Message, ...] = ()  # the new list, as later legs send it
    kind: Literal["branch"] = "branch"


Entry = (
    UserEntry | AssistantEntry | ReasoningEntry | CallEntry | NoteEntry | PlanEntry | BranchEntry
)

PinnedBy = Literal["person", "model"]


@dataclass(frozen=True, slots=True)
class Pin:
    """A fact kept word for word at every compaction, pinned by the person or by the model
    (its pin_fact tool)."""

    text: str
    by: PinnedBy = "person"


TurnStatus = Literal["idle", "running"]
TurnOutcome = Literal["", "done", "failed", "cancelled"]


@dataclass(frozen=True, slots=True)
class ThreadState:
    """The thread as a whole: is a turn running, which leg, the tokens so far, its pins."""

    status: TurnStatus = "idle"
    outcome: TurnOutcome = ""  # how the last turn ended
    turns: int = 0  # turns ended (each end changes the state, however it ended)
    leg: int = 0  # the leg running or last run (1-based over the thread's life)
    attempt: int = 1
    legs: int = 0  # legs finished
    usage: Usage = field(default_factory=Usage)  # over the thread's life
    last_usage: Usage | None = None  # the last leg's, as the server reported it
    pins: tuple[Pin, ...] = ()  # facts every compaction keeps word for word


def leg_started(before: ThreadState, after: ThreadState) -> bool:
    """A leg (or a new attempt at one) started between these two states of a thread."""
    if after.status != "running":
        return False
    return before.status != "running" or (after.leg, after.attempt) != (before.leg, before.attempt)


def turn_ended(before: ThreadState, after: ThreadState) -> bool:
    """A turn ended (done, failed or cancelled) between these two states of a thread."""
    return after.turns != before.turns
