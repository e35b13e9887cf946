"""Decide a whole command line against the rules, part by part.

A command line is allowed only when every simple command in it is covered by an allow
rule and every redirection target is inside the project (or a harmless device such as
/dev/null). Any part a deny rule matches denies the whole line. What the parser cannot
read is asked. Each part carries what decided it, for the approval view and the log.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Literal

from melgui.core.rules.command_rules import DANGEROUS_VARIABLES, suggest_rule, unwrap
from melgui.core.rules.rule_scopes import Rule
from melgui.core.rules.shell_parse import ParsedShell, Redirect, SimpleCommand, parse_shell

Verdict = Literal["allow", "deny", "ask"]
_DEVICES = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero"})
# Builtins that only change the shell itself (a changed directory is accounted for).
HARMLESS = frozenset({"true", "false", ":", "cd", "pushd", "popd", "test", "[", "shift"})
HARMLESS |= {"export", "local", "declare", "readonly", "typeset", "unset", "set", "wait"}
_MAX_DEPTH = 3  # sh -c 'sh -c "…"' is read this many levels deep


@dataclass(frozen=True, slots=True)
class Part:
    """One simple command or redirection, and what decided it."""

    text: str
    start: int  # character offsets into the command line
    end: int
    verdict: Verdict
    reason: str
    rule: Rule | None = None
    suggestion: str | None = None  # the command rule that would cover an asked command


@dataclass(frozen=True, slots=True)
class CommandJudgement:
    command: str
    verdict: Verdict
    parts: tuple[Part, ...]

    @property
    def rules(self) -> tuple[Rule, ...]:
        """The rules that decided, once each, in part order."""
        seen: dict[Rule, None] = {}
        for part in self.parts:
            if part.rule is not None and part.verdict == self.verdict:
                seen.setdefault(part.rule, None)
        return tuple(seen)

    @property
    def asked(self) -> tuple[Part, ...]:
        return tuple(p for p in self.parts if p.verdict == "ask")

    def suggestions(self) -> list[str] | None:
        """Command rules that would cover every asked part; None if some part cannot be
        covered by a rule (a redirection outside the project, unreadable input, …)."""
        out: list[str] = []
        for part in self.asked:
            if part.suggestion is None:
                return None
            if part.suggestion not in out:
                out.append(part.suggestion)
        return out


def judge_command(
    command: str, allow: list[Rule], deny: list[Rule], project: str
) -> CommandJudgement:
    return judge_parsed(parse_shell(command), allow, deny, project)


def judge_parsed(
    parsed: ParsedShell, allow: list[Rule], deny: list[Rule], project: str
) -> CommandJudgement:
    """A command line the shell parser has read, against the rules (read it once, judge
    it against several rule lists)."""
    return _judge(parsed, allow, deny, project, 0)


def _judge(
    parsed: ParsedShell, allow: list[Rule], deny: list[Rule], project: str, depth: int
) -> CommandJudgement:
    command = parsed.text
    parts = [_simple(c, allow, deny, project, depth) for c in parsed.commands]
    if parsed.problem is not None:
        parts.append(Part(command, 0, len(command), "ask", f"Not read: {parsed.problem}."))
    else:
        parts.extend(_redirect(r, parsed, project) for r in parsed.redirects if r.kind == "file")
    parts.sort(key=lambda p: (p.start, -p.end))
    verdicts = {p.verdict for p in parts}
    verdict: Verdict = "deny" if "deny" in verdicts else "ask" if "ask" in verdicts else "allow"
    return CommandJudgement(command, verdict, tuple(parts))


def _simple(
    command: SimpleCommand, allow: list[Rule], deny: list[Rule], project: str, depth: int
) -> Part:
    def part(verdict: Verdict, reason: str, rule: Rule | None = None) -> Part:
        suggestion = suggest_rule(command) if verdict == "ask" else None
        return Part(command.text, command.start, command.end, verdict, reason, rule, suggestion)

    seen = unwrap(command)
    # A rule can match only a layer whose program it names: the rest are skipped unread
    # (a deny rule reads the program by its base name).
    named = {w[0].text for w in seen.layers if w and w[0].literal}
    bases = {os.path.basename(text) for text in named}
    for rule in deny:
        matcher = rule.command
        if matcher is not None and matcher.words[0] in bases and matcher.denies(seen.layers):
            return part("deny", f"denied by “{rule.pattern}”", rule)
    if not command.words:
        risky = [name for name in command.assigns if name in DANGEROUS_VARIABLES]
        if risky:
            return part("ask", f"sets {', '.join(risky)}, which changes what later commands do")
        return part("allow", "sets a shell variable")
    if command.program in HARMLESS and not seen.dangers:
        return part("allow", "a shell builtin that changes only the shell")
    if seen.shell_code is not None and depth < _MAX_DEPTH:
        inner = _judge(parse_shell(seen.shell_code.text), allow, deny, project, depth + 1)
        others = [d for d in seen.dangers if d.key != "-c"]
        if inner.verdict == "deny":
            return part("deny", "its -c code: " + _first_reason(inner, "deny"))
        if inner.verdict == "allow" and not others:
            first = inner.rules[0] if inner.rules else None
            return part("allow", "every part of its -c code is covered", first)
    near: Rule | None = None
    for rule in allow:
        matcher = rule.command
        if matcher is None or matcher.words[0] not in named:
            continue
        for layer in seen.layers:
            if matcher.matches(layer):
                if matcher.names(seen.dangers):
                    return part("allow", f"covered by “{rule.pattern}”", rule)
                near = near or rule
    if near is not None:
        missing = [d for d in seen.dangers if near.command and d.key not in near.command.named]
        why = "; ".join(f"{d.why} ({d.key})" for d in missing)
        return part("ask", f"“{near.pattern}” does not name it: {why}")
    if seen.dangers:
        return part("ask", "no rule covers it; " + "; ".join(d.why for d in seen.dangers))
    return part("ask", "no rule covers it")


def _first_reason(judgement: CommandJudgement, verdict: Verdict) -> str:
    return next((p.reason for p in judgement.parts if p.verdict == verdict), verdict)


def _redirect(redirect: Redirect, parsed: ParsedShell, project: str) -> Part:
    text = parsed.text[redirect.start : redirect.end]

    def part(verdict: Verdict, reason: str) -> Part:
        return Part(text, redirect.start, redirect.end, verdict, reason)

    target = redirect.target
    if target is None or not target.literal:
        return part("ask", "the target is computed when it runs")
    path = target.text
    if path in _DEVICES or path.startswith("/dev/fd/"):
        return part("allow", f"{path} is a harmless device")
    if not os.path.isabs(path):
        if parsed.changes_dir:
            return part("ask", "relative to a directory a cd changed")
        if not project:
            return part("ask", "no project folder to resolve it in")
        path = os.path.join(project, path)
    if project and _inside(path, project):
        return part("allow", "inside the project")
    return part("ask", f"{target.text} is outside the project")


def _inside(path: str, project: str) -> bool:
    real = os.path.realpath(path)
    root = os.path.realpath(project)
    return real == root or real.startswith(root.rstrip(os.sep) + os.sep)
