"""A call's one judgement, from plan mode, the hooks before it, and the policy.

In order: plan mode refuses what changes things while planning (no hook runs for it);
the PreToolUse hooks run and may rewrite the arguments; the policy judges the arguments
that will run; then the hooks' verdict joins in as Claude Code's does: a hook's deny
denies, its ask asks (where the policy allowed), its allow answers what the policy would
have asked, and never overrides a deny rule. A tool that writes only the conversation's
state (`state_only`) runs where the policy would ask. The result names its source
("plan mode", "hook", "conversation state", or the policy's own), so the call's card,
the inspector and `record` read one value.

The policy looks before the hooks run too: after a hook's child its judgement runs on
cold caches, half again as slow (bench/bench_hooks.py). That first look is kept when the
hooks answered without giving the loop a turn (nothing could change the rules meanwhile)
and left the input as it was; otherwise the policy judges again, as above.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, replace
from typing import Any

from melgui.core.agent.plan_mode import PlanMode
from melgui.core.protocol.approval import ApprovalPolicy
from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import Judgement, allowed
from melgui.core.protocol.tooling import CallHooks, HookRun

HOOK = "hook"
STATE_ONLY = "conversation state"


@dataclass(frozen=True, slots=True)
class Judged:
    judgement: Judgement
    arguments: dict[str, Any]  # what runs: the model's, or a hook's rewrite
    runs: tuple[HookRun, ...] = ()


async def judge(
    call: ToolCall,
    arguments: dict[str, Any],
    policy: ApprovalPolicy,
    *,
    tool: ToolDef | None,
    plan: PlanMode,
    hooks: CallHooks | None,
) -> Judged:
    refused = plan.refusal(tool)
    if refused is not None:
        return Judged(refused, arguments)
    if hooks is None:
        return Judged(by_policy(call, arguments, policy, tool), arguments)
    # The policy judges first, before a hook's child leaves the caches cold (it then
    # runs slower); again when a hook rewrote the input, or when the hooks gave the loop
    # its turn (the rules may have changed meanwhile): the judgement is always of what
    # runs, by the rules as they are once the hooks have answered.
    judgement = by_policy(call, arguments, policy, tool)
    turned: list[None] = []
    turn = asyncio.get_running_loop().call_soon(turned.append, None)
    before = await hooks.before_call(call, arguments)
    turn.cancel()
    if before.arguments is not None:
        arguments = dict(before.arguments)
    if before.arguments is not None or turned:
        judgement = by_policy(call, arguments, policy, tool)
    return Judged(joined(judgement, before.verdict, before.reason), arguments, before.runs)


def by_policy(
    call: ToolCall, arguments: dict[str, Any], policy: ApprovalPolicy, tool: ToolDef | None
) -> Judgement:
    """The policy's judgement; a call it would ask about that reads nothing and writes
    only the conversation's own state (a pin) runs without asking. A deny rule stands."""
    judgement = policy.judge_call(call, arguments)
    if judgement.asks and tool is not None and tool.state_only:
        why = f"{call.name} reads nothing and writes only this conversation's state"
        return allowed(STATE_ONLY, why)
    return judgement


def joined(judgement: Judgement, verdict: str | None, reason: str) -> Judgement:
    """The policy's judgement with the PreToolUse hooks' verdict joined in."""
    if verdict == "deny":
        why = f"a PreToolUse hook blocked it: {reason}"
        return replace(judgement, verdict="deny", source=HOOK, reason=why)
    if verdict == "ask" and judgement.verdict == "allow":
        if judgement.source == "headless":  # nobody to ask
            why = f"a PreToolUse hook asks for a person, and this run has none: {reason}"
            return replace(judgement, verdict="deny", source=HOOK, reason=why)
        why = f"a PreToolUse hook asks: {reason}" if reason else "a PreToolUse hook asks"
        return replace(judgement, verdict="ask", source=HOOK, reason=why)
    if verdict == "allow" and judgement.verdict == "ask":
        why = "allowed by a PreToolUse hook" + (f": {reason}" if reason else "")
        return replace(judgement, verdict="allow", source=HOOK, reason=why)
    return judgement
