"""What the store gives back: small frozen records, no SQL."""

from __future__ import annotations

from dataclasses import dataclass

from melgui.core.protocol.call_life import CallPhase
from melgui.core.protocol.messages import Message
from melgui.core.protocol.tooling import HookRun


@dataclass(frozen=True, slots=True)
class ConversationSummary:
    """One row of the history sidebar."""

    id: str
    folder: str
    title: str
    created_at: float
    updated_at: float
    model: str = ""
    role: str = ""
    deleted_at: float | None = None
    title_custom: bool = False


@dataclass(frozen=True, slots=True)
class StoredMessage:
    """A message at its position; `partial` marks assistant text cut off while streaming."""

    seq: int
    message: Message
    partial: bool = False
    created_at: float = 0.0


@dataclass(frozen=True, slots=True)
class AllowedCall:
    """One entry of the log of calls that ran without asking."""

    conversation_id: str
    call_id: str
    name: str
    arguments: str
    rule: str  # "" when it ran on a tool's "run without asking" before rules were logged
    decided_at: float | None


@dataclass(frozen=True, slots=True)
class RecordedCall:
    """A past call and how it was decided, for trying rules on the history.

    `decided_at` is None when no person answered: a call a rule denied ends "denied"
    with no time of decision, one a person denied has one."""

    conversation_id: str
    call_id: str
    name: str
    arguments: str
    decision: str
    decided_at: float | None
    ran_arguments: str | None = None  # what ran instead, when a hook changed the arguments


@dataclass(frozen=True, slots=True)
class PinRecord:
    """A fact pinned in a conversation: kept word for word at every compaction.
    `pinned_by` is "person" or "model" (its pin_fact tool)."""

    text: str
    pinned_by: str


@dataclass(frozen=True, slots=True)
class ToolCallRecord:
    """A call's life as the inspector shows it.

    `decision` is "" (not needed or not yet), "auto", "auto:<the rule that allowed it>",
    "approved", "approved:session", "approved:project", "approved:saved" or "denied";
    `result_status` is a ResultStatus once done.
    """

    call_id: str
    name: str
    arguments: str
    state: CallPhase  # where the call is in its life (melgui.core.protocol.call_life)
    decision: str = ""
    result_status: str | None = None
    result: str | None = None
    requested_at: float = 0.0
    decided_at: float | None = None
    finished_at: float | None = None
    duration: float | None = None
    hooks: tuple[HookRun, ...] = ()  # the hooks that ran before and after it
    notes: tuple[str, ...] = ()  # lines steps after it added (a language server's diagnostics)


@dataclass(frozen=True, slots=True)
class PlanRecord:
    title: str
    markdown: str
    created_at: float
    call_id: str | None = None


@dataclass(frozen=True, slots=True)
class WireRecord:
    leg: int
    direction: str
    text: str
    at: float


@dataclass(frozen=True, slots=True)
class NoteRecord:
    """Something the person should see about the conversation's history (e.g. a repair)."""

    kind: str
    text: str
    at: float


@dataclass(frozen=True, slots=True)
class BranchRecord:
    """The message list as it was before it was replaced; kept, never sent again.

    `messages` counts the messages the branch holds; read them with
    `Store.branch_messages(id)`.
    """

    id: int
    reason: str
    note: str
    created_at: float
    messages: int
