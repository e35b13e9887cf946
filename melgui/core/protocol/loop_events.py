"""What the agent loop tells its observers (the window, the journal, `melgui exec --json`).

A tagged union of small frozen dataclasses; consumers `match` on them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Literal

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.events import ToolCall, Usage
from melgui.core.protocol.judgement import Judgement
from melgui.core.protocol.messages import Message, Repair, ResultStatus
from melgui.core.protocol.tooling import HookRun, ResultPart


@dataclass(frozen=True, slots=True)
class LegStarted:
    leg: int  # 1-based, counting legs of this loop's lifetime
    attempt: int = 1
    kind: Literal["leg_started"] = "leg_started"


@dataclass(frozen=True, slots=True)
class AssistantText:
    text: str
    kind: Literal["assistant_text"] = "assistant_text"


@dataclass(frozen=True, slots=True)
class AssistantReasoning:
    """A piece of the model's reasoning, streamed apart from its answer."""

    text: str
    kind: Literal["assistant_reasoning"] = "assistant_reasoning"


@dataclass(frozen=True, slots=True)
class MessageAdded:
    """A message was appended to the conversation (user, assistant or tool)."""

    message: Message
    kind: Literal["message_added"] = "message_added"


@dataclass(frozen=True, slots=True)
class ToolCallRequested:
    call: ToolCall
    kind: Literal["tool_call_requested"] = "tool_call_requested"


@dataclass(frozen=True, slots=True)
class ApprovalNeeded:
    request: ApprovalRequest
    kind: Literal["approval_needed"] = "approval_needed"


@dataclass(frozen=True, slots=True)
class ToolCallStarted:
    """A call starts running. `allowed_by` names the rule that let it run without asking
    ("" when a person approved it)."""

    call: ToolCall
    allowed_by: str = ""
    judgement: Judgement | None = None  # what the policy made of it (None: not judged)
    ran_with: dict[str, Any] | None = None  # what it runs with, when a hook changed the arguments
    kind: Literal["tool_call_started"] = "tool_call_started"


@dataclass(frozen=True, slots=True)
class ToolCallFinished:
    call: ToolCall
    status: ResultStatus
    content: str
    duration: float  # seconds the call ran (after any wait for approval)
    parts: tuple[ResultPart, ...] = ()  # what the inspector shows besides the text
    waited: float = 0.0  # seconds it waited for the person's approval
    judgement: Judgement | None = None  # None: not judged (bad arguments, skipped)
    checkpoint: int | None = None  # the checkpoint record taken around it, if any
    hooks: tuple[HookRun, ...] = ()  # the hooks that ran before and after it
    notes: tuple[str, ...] = ()  # lines for its card from the steps after it (diagnostics)
    kind: Literal["tool_call_finished"] = "tool_call_finished"


@dataclass(frozen=True, slots=True)
class LegFinished:
    leg: int
    usage: Usage | None
    kind: Literal["leg_finished"] = "leg_finished"


@dataclass(frozen=True, slots=True)
class Retrying:
    attempt: int
    delay: float
    reason: str
    kind: Literal["retrying"] = "retrying"


@dataclass(frozen=True, slots=True)
class HistoryRepaired:
    repair: Repair
    kind: Literal["history_repaired"] = "history_repaired"


BranchReason = Literal["rewind", "compaction", "edit", "retry"]


@dataclass(frozen=True, slots=True)
class HistoryBranched:
    """The message list was replaced (rewind, compaction, edit-and-resend, retry).

    The replaced messages stay in history as a branch; `messages` is the new list, the
    one later legs send. `note` says in a line what happened, for the person.
    """

    messages: tuple[Message, ...]
    reason: BranchReason
    note: str = ""
    replaced: tuple[Message, ...] = ()  # the list before, as the model was sent it
    kind: Literal["history_branched"] = "history_branched"


@dataclass(frozen=True, slots=True)
class ContextNotice:
    """About the model's window: a compaction under way, a prompt the server cut, a
    request that does not fit. `level` is "info" or "warning"."""

    text: str
    level: Literal["info", "warning"] = "info"
    kind: Literal["context_notice"] = "context_notice"


@dataclass(frozen=True, slots=True)
class TurnFinished:
    legs: int
    usage: Usage
    kind: Literal["turn_finished"] = "turn_finished"


@dataclass(frozen=True, slots=True)
class TurnFailed:
    message: str
    status: int | None = None
    kind: Literal["turn_failed"] = "turn_failed"


@dataclass(frozen=True, slots=True)
class TurnCancelled:
    kind: Literal["turn_cancelled"] = "turn_cancelled"


LoopEvent = (
    LegStarted
    | AssistantText
    | AssistantReasoning
    | MessageAdded
    | ToolCallRequested
    | ApprovalNeeded
    | ToolCallStarted
    | ToolCallFinished
    | LegFinished
    | Retrying
    | HistoryRepaired
    | HistoryBranched
    | ContextNotice
    | TurnFinished
    | TurnFailed
    | TurnCancelled
)
