"""Approval: a question with a future. The loop awaits a Decision; a UI or a rule answers."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import ASK, Judgement

Remember = Literal["once", "session", "project", "saved"]


@dataclass(frozen=True, slots=True)
class Approve:
    """Run the call. `remember` extends the approval to later calls: for this conversation
    ("session"), this project, or everywhere ("saved"). `rule` says which rule approved
    it when no person was asked (the log of calls that ran without asking)."""

    remember: Remember = "once"
    rule: str = ""
    kind: Literal["approve"] = "approve"


@dataclass(frozen=True, slots=True)
class Deny:
    reason: str = ""
    kind: Literal["deny"] = "deny"


Decision = Approve | Deny


@dataclass(frozen=True, slots=True)
class AgentOption:
    """One answer an ACP agent offers to its permission request, kept as it offered it.
    `kind` is the protocol's: allow_once, allow_always, reject_once or reject_always."""

    option_id: str
    label: str
    kind: str


@dataclass(eq=False)
class ApprovalRequest:
    """A call waiting for a person. Resolve it with approve() or deny(); once only."""

    call: ToolCall
    arguments: dict[str, Any]
    source: str = "main"  # which conversation asks: "main" or a pane title
    # What the policy made of the call (why it asks, a command's parts, what "Always
    # allow" would add): the call's card, the inspector and `record` read it.
    judgement: Judgement = ASK
    future: asyncio.Future[Decision] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )
    # An ACP agent's own answers (buttons with its labels); `chosen` is the one picked.
    options: tuple[AgentOption, ...] = ()
    chosen: str = ""
    # The deny reason the person is typing: one per pending call, typed on its card's
    # reason line, whichever key sends it.
    draft: str = ""
    # The change as a unified diff when the asker already has it (an ACP agent's edit);
    # the inspector shows it before the person answers.
    preview: str = ""

    @property
    def pending(self) -> bool:
        return not self.future.done()

    def approve(self, remember: Remember = "once") -> None:
        if self.pending:
            self.future.set_result(Approve(remember))

    def deny(self, reason: str = "") -> None:
        if self.pending:
            self.future.set_result(Deny(reason))

    def choose(self, option_id: str) -> None:
        """Answer with one of the agent's own options (`options`)."""
        option = next((o for o in self.options if o.option_id == option_id), None)
        if option is None or not self.pending:
            return
        self.chosen = option_id
        if option.kind.startswith("allow"):
            self.future.set_result(Approve("session" if option.kind == "allow_always" else "once"))
        else:
            self.future.set_result(Deny(option.label))


class ApprovalPolicy(Protocol):
    """Judges each call once; what it cannot decide (verdict "ask") goes to a person."""

    def judge_call(self, call: ToolCall, arguments: dict[str, Any]) -> Judgement: ...

    def record(self, call: ToolCall, judgement: Judgement, decision: Decision) -> None:
        """Learn from a person's decision (e.g. "always allow"), from the judgement kept."""
        ...


def decision_of(judgement: Judgement) -> Decision | None:
    """What a judgement decides by itself; None: a person decides."""
    if judgement.verdict == "allow":
        return Approve(rule=judgement.reason)
    if judgement.verdict == "deny":
        return Deny(judgement.reason)
    return None


def denial_text(name: str, reason: str) -> str:
    """The result the model gets for a denied call, so it can go on."""
    text = f"The user denied this {name} call."
    reason = reason.strip()
    if reason:
        text += f" Reason: {reason}" + ("" if reason[-1] in ".!?" else ".")
    return text + " Do not retry it unchanged; adjust or ask the user."
