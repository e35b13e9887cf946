"""melgui's ApprovalRequest as `session/request_permission`, and the answer back.

allow_always and reject_always last for the ACP session: an allowed tool is remembered
by the desk's rules ("for this conversation"), a rejected one by `Rejections`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from acp.schema import AllowedOutcome, PermissionOption, RequestPermissionResponse

from melgui.core.protocol.approval import ApprovalPolicy, ApprovalRequest, Decision
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import Judgement, denied

OPTIONS: tuple[PermissionOption, ...] = (
    PermissionOption(option_id="allow_once", name="Allow once", kind="allow_once"),
    PermissionOption(option_id="allow_always", name="Always allow", kind="allow_always"),
    PermissionOption(option_id="reject_once", name="Reject", kind="reject_once"),
    PermissionOption(option_id="reject_always", name="Always reject", kind="reject_always"),
)
_KINDS = {option.option_id: option.kind for option in OPTIONS}


@dataclass
class Rejections:
    """Tools the client rejected for the rest of the session, in front of the desk's rules."""

    rules: ApprovalPolicy
    tools: set[str] = field(default_factory=set)

    def judge_call(self, call: ToolCall, arguments: dict[str, Any]) -> Judgement:
        if call.name in self.tools:
            why = f"the client chose to always reject {call.name} in this session"
            return denied("client", why)
        return self.rules.judge_call(call, arguments)

    def record(self, call: ToolCall, judgement: Judgement, decision: Decision) -> None:
        self.rules.record(call, judgement, decision)


def resolve(
    request: ApprovalRequest, response: RequestPermissionResponse, rejections: Rejections
) -> None:
    """Answer `request` as the client chose; a cancelled or unknown answer denies it."""
    outcome = response.outcome
    if not isinstance(outcome, AllowedOutcome):
        request.deny("the client cancelled the permission request")
        return
    kind = _KINDS.get(outcome.option_id)
    if kind == "allow_once":
        request.approve("once")
    elif kind == "allow_always":
        request.approve("session")
    elif kind == "reject_always":
        rejections.tools.add(request.call.name)
        request.deny("")
    elif kind == "reject_once":
        request.deny("")
    else:
        request.deny(f"the client answered with an unknown option {outcome.option_id!r}")
