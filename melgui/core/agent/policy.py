"""Approval policies: rules in scopes with per-tool defaults, and fixed headless modes.

RulePolicy answers in this order: a deny rule that matches denies; run_command is read
by the shell parser and allowed when every part is covered (command_check); another
tool is allowed by a rule naming it; then a sandboxed run_command runs without asking
when the person chose that; then the tool's mode ("auto" runs without asking). What is
left goes to a person. Every approval without a person carries the rule that gave it.

`check_operation(origin, tool, arguments)` is the entry point for operations that are
not the model's tool calls of this loop: an MCP server's tool (`origin="mcp:<server>"`)
or an ACP agent's permission request (`origin="acp:<agent>"`). It answers with the same
rules, scoped to that origin, and None when a person must decide; after the person
answers, `record_operation(origin, tool, arguments, decision)` keeps an "always allow"
as a rule `allow <origin>/<tool>` in the chosen scope. An ACP agent's command (`execute`
with a `command` argument) is read as run_command's is: melgui's deny rules apply, the
agent's own command rules (`allow acp:<agent>/execute: git status`) allow, and "always
allow" adds one of those per part.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from melgui.core.agent.command_check import CommandJudgement, Part, judge_command
from melgui.core.agent.rule_scopes import (
    BUILTIN,
    COMMAND_TOOL,
    Rule,
    RuleBook,
    Scope,
    is_command_tool,
)
from melgui.core.agent.shell_parse import parse_shell
from melgui.core.protocol.approval import Approve, Decision, Deny, Remember
from melgui.core.protocol.catalog import DEFAULT_MODES, READ_ONLY_TOOLS, Mode
from melgui.core.protocol.events import ToolCall

# Shells whose command language the bash grammar reads as they do, for what rules check.
READABLE_SHELLS = frozenset({"sh", "bash", "dash", "ksh", "mksh", "zsh", "busybox"})
SANDBOX_RULE = "sandboxed: the rules do not cover it, the sandbox contains it"
_RANK: dict[Scope, int] = {"conversation": 0, "project": 1, "everywhere": 2}
_SCOPE_OF: dict[Remember, Scope] = {
    "session": "conversation",
    "project": "project",
    "saved": "everywhere",
}


@dataclass
class RulePolicy:
    """Per-tool modes plus rules in three scopes.

    `project` is the folder redirections must stay inside. `sandbox_on()` says whether
    run_command runs in the sandbox, `sandbox_answers()` whether it then runs what the
    rules do not cover without asking.
    `on_saved_change` is called after a project or everywhere rule is added, so settings
    can persist it; `origin_of` names the origin of a tool (from the desk's catalog);
    `shell` is the shell run_command uses: rules allow nothing in one they cannot read
    (fish, …).
    """

    modes: dict[str, Mode] = field(default_factory=lambda: dict(DEFAULT_MODES))
    book: RuleBook = field(default_factory=RuleBook)
    project: str = ""
    sandbox_answers: Callable[[], bool] = lambda: False
    sandbox_on: Callable[[], bool] = lambda: False
    on_saved_change: Callable[[], None] | None = None
    origin_of: Callable[[str], str] = lambda name: BUILTIN
    # HOOK (MCP): the default of a tool added at run time that no rule covers; the desk
    # answers "auto" only for a trusted server's readOnlyHint tool (its ToolDef).
    runtime_default: Callable[[str], Mode] = lambda name: "ask"
    shell: str = "sh"  # the base name of the shell run_command uses

    # -- deciding ------------------------------------------------------------------------

    def check(self, call: ToolCall, arguments: dict[str, Any]) -> Decision | None:
        return self.check_operation(self.origin_of(call.name), call.name, arguments)

    def check_operation(self, origin: str, tool: str, arguments: dict[str, Any]) -> Decision | None:
        """Answer a tool call or permission request of `origin` by the rules; None: ask."""
        command = arguments.get("command")
        if origin == BUILTIN and tool == COMMAND_TOOL and isinstance(command, str):
            return self._command(command)
        rules = self.book.for_tool(origin, tool)
        for rule in rules:
            if rule.effect == "deny":
                return Deny(f"denied by the rule “{rule.text}” ({rule.scope})")
        if is_command_tool(origin, tool) and isinstance(command, str):
            judged = self._agent_command(command, origin)
            if judged is not None or not rules:
                return judged
        if rules:
            return Approve(rule=rules[0].describe())
        if origin == BUILTIN and self.modes.get(tool, "ask") == "auto":
            return Approve(rule=f"{tool}: run without asking (tool setting)")
        if origin != BUILTIN and self.runtime_default(tool) == "auto":
            return Approve(rule=f"{tool}: read-only, from a server marked trusted")
        return None

    def judge(
        self, command: str, lasting: Scope = "conversation", origin: str = BUILTIN
    ) -> CommandJudgement:
        """The command read part by part against the rules (for the approval view); with
        `lasting`, allow rules of narrower scopes are left out. An ACP agent's (`origin`)
        is allowed by its own command rules only, denied by melgui's and its own."""
        allow = self.book.commands("allow", origin)
        allow = [r for r in allow if _RANK[r.scope] >= _RANK[lasting]]
        deny = self.book.commands("deny")
        if origin != BUILTIN:
            deny += self.book.commands("deny", origin)
        judgement = judge_command(command, allow, deny, self.project)
        if self.shell in READABLE_SHELLS or judgement.verdict == "deny":
            return judgement
        why = f"commands run in {self.shell}, whose syntax the rules do not read"
        asked = Part(command, 0, len(command), "ask", why)
        return CommandJudgement(command, "ask", (asked, *judgement.parts))

    def _agent_command(self, command: str, origin: str) -> Decision | None:
        """An ACP agent's command: the agent runs it, so no sandbox answers for it."""
        return _verdict(self.judge(command, origin=origin))

    def _command(self, command: str) -> Decision | None:
        decision = _verdict(self.judge(command))
        if decision is not None:
            return decision
        if self.sandbox_answers():
            return Approve(rule=SANDBOX_RULE)
        if self.modes.get(COMMAND_TOOL, "ask") == "auto":
            return Approve(rule=f"{COMMAND_TOOL}: run without asking (tool setting)")
        return None

    # -- learning ------------------------------------------------------------------------

    def rules_for(
        self, tool: str, arguments: dict[str, Any], scope: Scope, origin: str | None = None
    ) -> list[Rule]:
        """The rules "always allow" would add for this call, [] when none can cover it."""
        origin = self.origin_of(tool) if origin is None else origin
        target = tool if origin == BUILTIN else f"{origin}/{tool}"
        command = arguments.get("command")
        if origin == BUILTIN and tool == COMMAND_TOOL and not isinstance(command, str):
            return []
        if is_command_tool(origin, tool) and isinstance(command, str):
            # a part a narrower rule covers still needs a rule that lasts as long
            suggestions = self.judge(command, scope, origin).suggestions()
            if not suggestions:
                return []
            return [Rule.parse(f"allow {target}: {s}", scope) for s in suggestions]
        return [Rule.parse(f"allow {target}", scope)]

    def record(self, call: ToolCall, arguments: dict[str, Any], decision: Decision) -> None:
        self.record_operation(self.origin_of(call.name), call.name, arguments, decision)

    def record_operation(
        self, origin: str, tool: str, arguments: dict[str, Any], decision: Decision
    ) -> None:
        """Learn from a person's answer to an operation of `origin` ("always allow")."""
        if not isinstance(decision, Approve) or decision.remember == "once":
            return
        scope = _SCOPE_OF[decision.remember]
        rules = self.rules_for(tool, arguments, scope, origin)
        added = [self.book.add(r) for r in rules]
        if any(added) and scope != "conversation" and self.on_saved_change is not None:
            self.on_saved_change()

    def add_rule(self, rule: Rule) -> None:
        if self.book.add(rule) and rule.scope != "conversation" and self.on_saved_change:
            self.on_saved_change()


def _verdict(judgement: CommandJudgement) -> Decision | None:
    """What a command's judgement decides by itself (None: not covered)."""
    if judgement.verdict == "deny":
        rule = judgement.rules[0] if judgement.rules else None
        if rule is not None:
            return Deny(f"denied by the rule “{rule.text}” ({rule.scope})")
        # a wrapper's part (sh -c '…') names the inner rule in its reason
        why = next((p.reason for p in judgement.parts if p.verdict == "deny"), "")
        return Deny(f"denied: {why}" if why else "denied")
    if judgement.verdict == "allow":
        text = "; ".join(r.describe() for r in judgement.rules) or "plain variable assignments"
        return Approve(rule=text)
    return None


def commands_matched(rule: Rule, history: Iterable[str], project: str) -> list[str]:
    """Which past commands a command rule would have allowed on its own (rule editor)."""
    allow, deny = ([rule], []) if rule.effect == "allow" else ([], [rule])
    want = rule.effect
    return [c for c in history if judge_command(c, allow, deny, project).verdict == want]


def is_readable(command: str) -> bool:
    """The shell parser reads all of `command`."""
    return parse_shell(command).problem is None


HeadlessMode = Literal["reads", "all", "none"]


@dataclass(frozen=True)
class FixedPolicy:
    """`melgui exec --approve`: decides every call without asking anyone.

    `read_only` says which tools "reads" runs: the built-in read-only set unless given
    (exec passes the catalog's, so a trusted MCP server's readOnlyHint tools count)."""

    mode: HeadlessMode = "reads"
    read_only: Callable[[str], bool] = READ_ONLY_TOOLS.__contains__

    def check(self, call: ToolCall, arguments: dict[str, Any]) -> Decision:
        if self.mode == "all":
            return Approve(rule="melgui exec --approve all")
        if self.mode == "reads" and self.read_only(call.name):
            return Approve(rule="melgui exec --approve reads")
        return Deny(f"headless run with --approve {self.mode}: {call.name} is not allowed")

    def record(self, call: ToolCall, arguments: dict[str, Any], decision: Decision) -> None:
        return None
