"""`session/request_permission`: melgui's rules first, scoped to the agent; then a person.

The operation is named `acp:<agent>/<kind>` (the ACP tool kind: edit, execute, read,
…), so `allow acp:opencode/*` or `deny acp:gemini/execute` answer without asking, and
nothing granted to one agent applies to another. An `execute` is judged by its command
(its raw input's, else its title) with melgui's command rules: melgui's deny rules apply
to it, and "always" grants a rule per part (`allow acp:opencode/execute: git status`),
or nothing, answered as "once", when a part cannot be covered by a rule.

The PreToolUse hooks run on each request too, with the ACP kind read as melgui's tool
(`execute` as run_command, so as `Bash`; `edit` as `Edit`, …) and the agent's raw input
as `tool_input`: a hook's deny rejects, its ask asks, its allow answers what the rules
would have asked. A hook cannot rewrite another agent's input; a rewrite is told, not
applied.

What the rules leave open becomes an ApprovalRequest carrying the agent's own options,
handed to `ask` (the pane, which puts it in the window's one queue). A request still
open when the turn is cancelled or the pane closes is answered `cancelled`.
"""

from __future__ import annotations

import asyncio
import json
import shlex
from collections.abc import Callable
from typing import Any

from acp.schema import (
    AllowedOutcome,
    DeniedOutcome,
    PermissionOption,
    RequestPermissionResponse,
    ToolCallUpdate,
)

from melgui.core.agent.call_judge import joined
from melgui.core.protocol.approval import AgentOption, ApprovalRequest, Approve, Decision
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import ASK, Judgement
from melgui.core.protocol.tooling import CallHooks
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import AGENT_COMMAND_TOOL, Rule
from melgui.desk.hosted_agents.updates import content_diff

AskPerson = Callable[[ApprovalRequest], None]
Tell = Callable[[str], None]
CANCELLED = RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
# An ACP tool kind as the melgui tool whose hooks apply to it (Bash, Edit, Read, …).
HOOKED_KINDS = {
    "execute": "run_command",
    "edit": "edit_file",
    "delete": "write_file",
    "move": "write_file",
    "read": "read_file",
    "search": "grep",
    "fetch": "web_search",
}


def operation_of(tool_call: ToolCallUpdate) -> tuple[str, dict[str, Any]]:
    """The tool name rules match (the ACP kind) and the arguments they may read; an
    `execute` carries the command line it runs as `command`."""
    tool = tool_call.kind or "other"
    arguments: dict[str, Any] = {"title": tool_call.title or tool}
    if isinstance(tool_call.raw_input, dict):
        arguments["input"] = tool_call.raw_input
        command = command_line(tool_call.raw_input.get("command"))
        if command:
            arguments["command"] = command
    if tool == AGENT_COMMAND_TOOL and "command" not in arguments and tool_call.title:
        arguments["command"] = tool_call.title
    return tool, arguments


def command_line(value: Any) -> str:
    """A command as agents put it in raw_input: a line, or an argv list."""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(isinstance(w, str) for w in value):
        return shlex.join(value)
    return ""


def selected(options: list[PermissionOption], *kinds: str) -> RequestPermissionResponse:
    """The first option of the first of `kinds` the agent offered; cancelled when none."""
    for kind in kinds:
        for option in options:
            if option.kind == kind:
                return RequestPermissionResponse(
                    outcome=AllowedOutcome(outcome="selected", option_id=option.option_id)
                )
    return CANCELLED


class PermissionGate:
    """Answers one agent's permission requests."""

    def __init__(
        self,
        origin: str,
        source: str,
        policy: RulePolicy | None,
        ask: AskPerson | None,
        tell: Tell | None = None,
    ) -> None:
        self.origin = origin  # acp:<agent>
        self.source = source  # the pane's title, naming the request in the queue
        self.policy = policy
        self.ask = ask
        self.tell = tell  # a note for the person (an "always" that could not be kept)
        # The diff the agent's updates showed for a call (when the request carries none).
        self.known_diff: Callable[[str], str] = lambda call_id: ""
        self.pending: list[ApprovalRequest] = []
        self.answered_by_rules: list[str] = []  # the rules' texts, newest last
        self.hooks: CallHooks | None = None  # the PreToolUse hooks of the desk's folder

    async def decide(
        self, tool_call: ToolCallUpdate, options: list[PermissionOption]
    ) -> RequestPermissionResponse:
        tool, arguments = operation_of(tool_call)
        judgement = ASK
        if self.policy is not None:
            judgement = self.policy.judge_operation(self.origin, tool, arguments)
        if self.hooks is not None:
            judgement = await self._hooked(tool_call, tool, arguments, judgement)
        if judgement.verdict != "ask":
            if judgement.verdict == "allow":
                self.answered_by_rules.append(judgement.reason)
                return selected(options, "allow_once", "allow_always")
            self.answered_by_rules.append(judgement.reason)
            return selected(options, "reject_once", "reject_always")
        if self.ask is None:
            return selected(options, "reject_once", "reject_always")
        call = ToolCall(tool_call.tool_call_id, tool, json.dumps(arguments))
        request = ApprovalRequest(
            call,
            arguments,
            source=self.source,
            judgement=judgement,
            options=tuple(AgentOption(o.option_id, o.name, o.kind) for o in options),
            preview=content_diff(tool_call.content) or self.known_diff(tool_call.tool_call_id),
        )
        self.pending.append(request)
        self.ask(request)
        try:
            decision = await asyncio.shield(request.future)
        finally:
            self.pending.remove(request)
        return self._answer(request, decision, options, tool, arguments)

    async def _hooked(
        self, tool_call: ToolCallUpdate, tool: str, arguments: dict[str, Any], judgement: Judgement
    ) -> Judgement:
        assert self.hooks is not None
        name = HOOKED_KINDS.get(tool, tool)
        given = dict(arguments.get("input") or {})
        if "command" in arguments:
            given["command"] = arguments["command"]
        call = ToolCall(tool_call.tool_call_id, name, json.dumps(given))
        before = await self.hooks.before_call(call, given)
        for run in before.runs:
            if run.failed or run.effect:
                self._say(run.headline())
        if before.arguments is not None:
            self._say("A hook rewrote the input; an agent's own input cannot be changed.")
        return joined(judgement, before.verdict, before.reason)

    def _answer(
        self,
        request: ApprovalRequest,
        decision: Decision,
        options: list[PermissionOption],
        tool: str,
        arguments: dict[str, Any],
    ) -> RequestPermissionResponse:
        if request.chosen == "cancelled":
            return CANCELLED
        chosen = next((o for o in options if o.option_id == request.chosen), None)
        if chosen is not None:
            kind = chosen.kind
        elif isinstance(decision, Approve):  # melgui's own Approve button
            kind = "allow_once" if decision.remember == "once" else "allow_always"
        else:
            kind = "reject_once"
        if self.policy is not None and kind == "allow_always":
            if request.judgement.always.get("conversation"):  # the rules judged when asked
                self.policy.record(request.call, request.judgement, Approve("session"))
            else:  # as melgui's own "Always allow" is refused: only this once
                what = arguments.get("command", tool)
                self._say(f"Allowed once only: no rule can cover every part of “{what}”.")
                kind, chosen = "allow_once", None
        if self.policy is not None and kind == "reject_always":
            rule = self._rejection(tool, arguments)
            if rule is not None:
                self.policy.add_rule(rule)
        if chosen is not None:
            return RequestPermissionResponse(
                outcome=AllowedOutcome(outcome="selected", option_id=chosen.option_id)
            )
        if kind == "allow_always":
            return selected(options, "allow_always", "allow_once")
        if kind == "allow_once":  # an agent that offers only "always" still gets the yes
            return selected(options, "allow_once", "allow_always")
        return selected(options, kind, "reject_always" if kind == "reject_once" else "reject_once")

    def _rejection(self, tool: str, arguments: dict[str, Any]) -> Rule | None:
        """A deny rule for what was rejected "always": an agent's command by its words
        when it is one simple command (none for a compound one: which part was meant?),
        else the whole kind."""
        command = arguments.get("command")
        if tool != AGENT_COMMAND_TOOL or not isinstance(command, str) or self.policy is None:
            return Rule.parse(f"deny {self.origin}/{tool}", "conversation")
        parts = self.policy.judge(command, origin=self.origin).parts
        if len(parts) == 1 and parts[0].suggestion:
            return Rule.parse(f"deny {self.origin}/{tool}: {parts[0].suggestion}", "conversation")
        self._say(f"Rejected; no lasting rule: “{command}” is more than one command.")
        return None

    def _say(self, text: str) -> None:
        if self.tell is not None:
            self.tell(text)

    def cancel_all(self, reason: str) -> None:
        """Answer every open request `cancelled` (turn cancelled, pane closed)."""
        for request in list(self.pending):
            if request.pending:
                request.chosen = "cancelled"
                request.deny(reason)
