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

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from typing import Any, Literal, cast, get_args

from melgui.core.protocol.approval import Approve, Decision, Deny, Remember, decision_of
from melgui.core.protocol.catalog import DEFAULT_MODES, READ_ONLY_TOOLS, Mode
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import JudgedPart, JudgedRule, Judgement, allowed, denied
from melgui.core.protocol.views.scopes import SCOPES, Scope
from melgui.core.rules.command_check import CommandJudgement, Part, judge_parsed
from melgui.core.rules.rule_scopes import (
    AGENT_COMMAND_TOOL,
    BUILTIN,
    COMMAND_TOOL,
    Rule,
    RuleBook,
    is_command_tool,
    parse_rules,
    rule_lines,
)
from melgui.core.rules.shell_parse import ParsedShell, parse_shell

# Shells whose command language the bash grammar reads as they do, for what rules check.
READABLE_SHELLS = frozenset({"sh", "bash", "dash", "ksh", "mksh", "zsh", "busybox"})
SANDBOX_RULE = "sandboxed: the rules do not cover it, the sandbox contains it"
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

    # -- judging -------------------------------------------------------------------------

    def judge_call(self, call: ToolCall, arguments: dict[str, Any]) -> Judgement:
        """The one judgement of a model's call, kept on the call."""
        return self.judge_operation(self.origin_of(call.name), call.name, arguments)

    def check(self, call: ToolCall, arguments: dict[str, Any]) -> Decision | None:
        return decision_of(self.judge_call(call, arguments))

    def check_operation(self, origin: str, tool: str, arguments: dict[str, Any]) -> Decision | None:
        """Answer a tool call or permission request of `origin` by the rules; None: ask."""
        return decision_of(self.judge_operation(origin, tool, arguments))

    def judge_operation(self, origin: str, tool: str, arguments: dict[str, Any]) -> Judgement:
        command = arguments.get("command")
        if origin == BUILTIN and tool == COMMAND_TOOL and isinstance(command, str):
            return self._command(command)
        rules = self.book.for_tool(origin, tool)
        for rule in rules:
            if rule.effect == "deny":
                return denied("rule", f"denied by the rule “{rule.text}” ({rule.scope})")
        if is_command_tool(origin, tool) and isinstance(command, str):
            judged = self._read(command, origin, sandboxed=False)
            if not judged.asks or not rules:
                return judged
        if rules:
            return allowed("rule", rules[0].describe())
        if origin == BUILTIN and self.modes.get(tool, "ask") == "auto":
            return allowed("tool setting", f"{tool}: run without asking (tool setting)")
        if origin != BUILTIN and self.runtime_default(tool) == "auto":
            return allowed("trusted server", f"{tool}: read-only, from a server marked trusted")
        return Judgement("ask", always=self._always(origin, tool, arguments), learns=True)

    def judge(
        self, command: str, lasting: Scope = "conversation", origin: str = BUILTIN
    ) -> CommandJudgement:
        """The command read part by part against the rules (the rule editor, an ACP
        agent's rejection); with `lasting`, allow rules of narrower scopes are left out.
        An ACP agent's (`origin`) is allowed by its own command rules only, denied by
        melgui's and its own."""
        return self._judge_parsed(parse_shell(command), self._allow(lasting, origin), origin)

    def _allow(self, lasting: Scope, origin: str) -> list[Rule]:
        return self.book.commands("allow", origin, lasting)

    def _judge_parsed(
        self, parsed: ParsedShell, allow: list[Rule], origin: str
    ) -> CommandJudgement:
        deny = self.book.commands("deny")
        if origin != BUILTIN:
            deny += self.book.commands("deny", origin)
        judgement = judge_parsed(parsed, allow, deny, self.project)
        if self.shell in READABLE_SHELLS or judgement.verdict == "deny":
            return judgement
        why = f"commands run in {self.shell}, whose syntax the rules do not read"
        command = parsed.text
        asked = Part(command, 0, len(command), "ask", why)
        return CommandJudgement(command, "ask", (asked, *judgement.parts))

    def _read(self, command: str, origin: str, *, sandboxed: bool) -> Judgement:
        """A command parsed once and judged: what its parts decide and, when a part is
        asked, the rules "Always allow" would add in each scope."""
        parsed = parse_shell(command)
        full = self._judge_parsed(parsed, self._allow("conversation", origin), origin)
        parts = tuple(_judged_part(p) for p in full.parts)
        if full.verdict == "deny":
            return Judgement("deny", "rule", _denial(full), command, parts, sandboxed=sandboxed)
        if full.verdict == "allow":
            text = "; ".join(r.describe() for r in full.rules) or "plain variable assignments"
            return Judgement("allow", "rule", text, command, parts, sandboxed=sandboxed)
        always = self._command_always(parsed, origin, full)
        why = "; ".join(p.reason for p in full.asked)
        return Judgement("ask", "", why, command, parts, always, True, sandboxed)

    def _always(
        self, origin: str, tool: str, arguments: dict[str, Any]
    ) -> dict[Scope, tuple[JudgedRule, ...]]:
        """The rules "always allow" would add for a call, per scope: for a command one
        per part (a part a narrower rule covers still needs one that lasts as long)."""
        command = arguments.get("command")
        if is_command_tool(origin, tool):
            if not isinstance(command, str):
                return {}
            return self._command_always(parse_shell(command), origin, None)
        target = tool if origin == BUILTIN else f"{origin}/{tool}"
        return {s: (_judged_rule(Rule.parse(f"allow {target}", s)),) for s in SCOPES}

    def _command_always(
        self, parsed: ParsedShell, origin: str, full: CommandJudgement | None
    ) -> dict[Scope, tuple[JudgedRule, ...]]:
        target = COMMAND_TOOL if origin == BUILTIN else f"{origin}/{AGENT_COMMAND_TOOL}"
        always: dict[Scope, tuple[JudgedRule, ...]] = {}
        # `full` was judged with every allow rule, as the conversation scope's lasting are
        allow = self._allow("conversation", origin) if full is not None else None
        judged = full
        for scope in SCOPES:
            lasting = self._allow(scope, origin)
            if judged is None or lasting != allow:  # judge without the narrower rules
                judged = self._judge_parsed(parsed, lasting, origin)
            allow = lasting
            suggestions = judged.suggestions()
            if suggestions:
                rules = [Rule.parse(f"allow {target}: {s}", scope) for s in suggestions]
                always[scope] = tuple(_judged_rule(r) for r in rules)
        return always

    def _command(self, command: str) -> Judgement:
        judged = self._read(command, BUILTIN, sandboxed=self.sandbox_on())
        if not judged.asks:
            return judged
        if self.sandbox_answers():
            return replace(judged, verdict="allow", source="sandbox", reason=SANDBOX_RULE)
        if self.modes.get(COMMAND_TOOL, "ask") == "auto":
            why = f"{COMMAND_TOOL}: run without asking (tool setting)"
            return replace(judged, verdict="allow", source="tool setting", reason=why)
        return judged

    # -- learning ------------------------------------------------------------------------

    def rules_for(
        self, tool: str, arguments: dict[str, Any], scope: Scope, origin: str | None = None
    ) -> list[Rule]:
        """The rules "always allow" would add for this call, [] when none can cover it."""
        origin = self.origin_of(tool) if origin is None else origin
        always = self._always(origin, tool, arguments).get(scope, ())
        return [Rule.parse(r.text, scope) for r in always]

    def record(self, call: ToolCall, judgement: Judgement, decision: Decision) -> None:
        """Learn from a person's answer: "always allow" adds the rules the call's
        judgement proposed for the chosen scope."""
        if not isinstance(decision, Approve) or decision.remember == "once":
            return
        scope = _SCOPE_OF[decision.remember]
        self._learn([Rule.parse(r.text, scope) for r in judgement.always.get(scope, ())])

    def _learn(self, rules: list[Rule]) -> None:
        added = [self.book.add(r) for r in rules]
        saved = any(a and r.scope != "conversation" for a, r in zip(added, rules, strict=True))
        if saved and self.on_saved_change is not None:
            self.on_saved_change()

    def record_operation(
        self, origin: str, tool: str, arguments: dict[str, Any], decision: Decision
    ) -> None:
        """Learn from a person's answer to an operation of `origin` ("always allow")."""
        if not isinstance(decision, Approve) or decision.remember == "once":
            return
        scope = _SCOPE_OF[decision.remember]
        self._learn(self.rules_for(tool, arguments, scope, origin))

    def add_rule(self, rule: Rule) -> None:
        if self.book.add(rule) and rule.scope != "conversation" and self.on_saved_change:
            self.on_saved_change()


def _denial(judgement: CommandJudgement) -> str:
    """Why a denied command is denied: its rule, or a wrapper's part (sh -c '…'), which
    names the inner rule in its reason."""
    rule = judgement.rules[0] if judgement.rules else None
    if rule is not None:
        return f"denied by the rule “{rule.text}” ({rule.scope})"
    why = next((p.reason for p in judgement.parts if p.verdict == "deny"), "")
    return f"denied: {why}" if why else "denied"


def _judged_rule(rule: Rule) -> JudgedRule:
    return JudgedRule(rule.text, rule.scope, rule.pattern)


def _judged_part(part: Part) -> JudgedPart:
    rule = _judged_rule(part.rule) if part.rule is not None else None
    return JudgedPart(part.text, part.start, part.end, part.verdict, part.reason, rule)


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

    def judge_call(self, call: ToolCall, arguments: dict[str, Any]) -> Judgement:
        decision = self.check(call, arguments)
        if isinstance(decision, Approve):
            return allowed("headless", decision.rule)
        return denied("headless", decision.reason)

    def record(self, call: ToolCall, judgement: Judgement, decision: Decision) -> None:
        return None


# -- a window's approval settings, as it sends them to a session it runs in a melgui host --
# (`settings/update`'s `approval`): the per-tool modes and the rules of every project and
# of this one, which the host's policy for that session takes in place of its own
# settings file's, so the host asks exactly when the window would.


def approval_of(policy: RulePolicy) -> dict[str, Any]:
    """The modes and the lasting rules of `policy` (a conversation's own rules are its
    session's: learned where it runs)."""
    book = policy.book
    return {
        "modes": dict(sorted(policy.modes.items())),
        "rules": rule_lines(book.everywhere),
        "project_rules": rule_lines(book.project),
    }


def apply_approval(policy: RulePolicy, approval: dict[str, Any]) -> list[str]:
    """Put `approval` into `policy`, in place (the lists its desk's policies share: a
    desk of one session's own, or this machine's for the folder, whose settings file is
    the window's own). Returns the rules that could not be read. Raises ValueError for
    what is not an approval."""
    modes = approval.get("modes", {})
    rules, project = approval.get("rules", []), approval.get("project_rules", [])
    if not isinstance(modes, dict) or not all(m in get_args(Mode) for m in modes.values()):
        raise ValueError(f"modes map a tool to one of {get_args(Mode)}")
    lines = (rules, project)
    if not all(isinstance(x, list) and all(isinstance(r, str) for r in x) for x in lines):
        raise ValueError("rules and project_rules are lists of rule lines")
    everywhere, problems = parse_rules(rules, "everywhere")
    here, more = parse_rules(project, "project")
    policy.modes.clear()
    policy.modes.update({str(k): cast(Mode, v) for k, v in modes.items()})
    policy.book.everywhere[:] = everywhere
    policy.book.project[:] = here
    return problems + more
