"""Rules in three scopes: this conversation, this project, everywhere.

A rule is one line of text, the form settings keep and the rule editor shows:

    allow run_command: git status          a command rule (see command_rules)
    deny run_command: rm                   deny rules win over every allow rule
    allow write_file                       any call of a built-in tool
    allow mcp:github/create_issue          a tool of one MCP server
    allow acp:claude/*                     every permission request of one ACP agent
    allow acp:claude/execute: git status   a command of one ACP agent (a command rule)

Conversation rules live in memory with the conversation's policy. Project rules are kept
in melgui's own config keyed by the project folder, not in the project: an agent that can
write the project must not be able to write its own permissions. Everywhere rules are in
the same config file.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Literal

from melgui.core.protocol.views.scopes import SCOPE_LABEL, SCOPES, Scope
from melgui.core.rules.command_rules import CommandRule

LASTS: dict[Scope, int] = {scope: rank for rank, scope in enumerate(SCOPES)}  # how long
Effect = Literal["allow", "deny"]
BUILTIN = "melgui"
COMMAND_TOOL = "run_command"
AGENT_COMMAND_TOOL = "execute"  # the ACP tool kind of an agent's commands


def is_command_tool(origin: str, tool: str) -> bool:
    """Calls of this tool run a command line that command rules read."""
    if origin == BUILTIN:
        return tool == COMMAND_TOOL
    return origin.startswith("acp:") and tool == AGENT_COMMAND_TOOL


@dataclass(frozen=True, slots=True)
class Rule:
    effect: Effect
    tool: str  # a tool name, or "*" for every tool of `origin`
    origin: str = BUILTIN  # "melgui", "mcp:<server>" or "acp:<agent>"
    pattern: str = ""  # run_command: the command rule's words; "" otherwise
    scope: Scope = "everywhere"
    command: CommandRule | None = field(default=None, compare=False, repr=False)

    @classmethod
    def parse(cls, text: str, scope: Scope = "everywhere") -> Rule:
        """Read one rule line; raises ValueError saying what is wrong."""
        return _parse_rule(text, scope)

    @classmethod
    def _read(cls, text: str, scope: Scope) -> Rule:
        effect_word, _, rest = text.strip().partition(" ")
        rest = rest.strip()
        if rest.startswith(("mcp:", "acp:")):
            target, _, pattern = rest.partition(" ")
            if target.endswith(":"):  # acp:<agent>/execute: <command>
                target = target[:-1]
            elif pattern:
                raise ValueError(f"{text!r}: write acp:<agent>/execute: <command>")
            origin, slash, tool = target.partition("/")
            if not slash:
                raise ValueError(f"{text!r}: write mcp:<server>/<tool> or acp:<agent>/<tool>")
            return cls._make(effect_word, tool, origin, pattern, scope, text)
        tool, _, pattern = rest.partition(":")
        return cls._make(effect_word, tool.strip(), BUILTIN, pattern, scope, text)

    @classmethod
    def _make(
        cls, effect: str, tool: str, origin: str, pattern: str, scope: Scope, text: str
    ) -> Rule:
        if effect not in ("allow", "deny"):
            raise ValueError(f"{text!r}: a rule starts with 'allow' or 'deny'")
        if not tool or " " in tool:
            raise ValueError(f"{text!r}: name one tool after {effect!r}")
        pattern = " ".join(pattern.split())
        command = None
        # acp:<agent>/execute without a pattern is a rule for every command of the agent
        if is_command_tool(origin, tool) and (pattern or origin == BUILTIN):
            if not pattern:
                raise ValueError(f"{text!r}: a run_command rule names a command: 'git status'")
            command = CommandRule.parse(pattern)
            pattern = command.text
        elif pattern:
            raise ValueError(f"{text!r}: only command rules take a pattern")
        return cls(effect, tool, origin, pattern, scope, command)  # type: ignore[arg-type]

    @property
    def text(self) -> str:
        target = self.tool if self.origin == BUILTIN else f"{self.origin}/{self.tool}"
        return f"{self.effect} {target}" + (f": {self.pattern}" if self.pattern else "")

    def describe(self) -> str:
        """The rule and where it lives, as the log and the approval view show it."""
        return f"{self.text} ({SCOPE_LABEL[self.scope]})"

    def covers_tool(self, origin: str, tool: str) -> bool:
        return self.origin == origin and self.tool in (tool, "*")


@dataclass
class RuleBook:
    """The rules of one conversation: its own, and the project's and everywhere's lists,
    which are shared with every other conversation of the desk (mutated in place)."""

    conversation: list[Rule] = field(default_factory=list)
    project: list[Rule] = field(default_factory=list)
    everywhere: list[Rule] = field(default_factory=list)

    def scope(self, scope: Scope) -> list[Rule]:
        return {
            "conversation": self.conversation,
            "project": self.project,
            "everywhere": self.everywhere,
        }[scope]

    def __iter__(self) -> Iterator[Rule]:
        yield from self.conversation
        yield from self.project
        yield from self.everywhere

    def add(self, rule: Rule) -> bool:
        """Add `rule` to its scope; False when it is already there."""
        rules = self.scope(rule.scope)
        if rule in rules:
            return False
        rules.append(rule)
        return True

    def remove(self, rule: Rule) -> bool:
        rules = self.scope(rule.scope)
        if rule not in rules:
            return False
        rules.remove(rule)
        return True

    def commands(
        self, effect: Effect, origin: str = BUILTIN, lasting: Scope = "conversation"
    ) -> list[Rule]:
        """Command rules of `origin`: melgui's run_command, or one ACP agent's execute;
        with `lasting`, only those of scopes that last at least as long."""
        rank = LASTS[lasting]
        return [
            r
            for r in self
            if r.command is not None
            and r.effect == effect
            and r.origin == origin
            and LASTS[r.scope] >= rank
        ]

    def for_tool(self, origin: str, tool: str) -> list[Rule]:
        return [r for r in self if r.command is None and r.covers_tool(origin, tool)]


@functools.lru_cache(maxsize=4096)
def _parse_rule(text: str, scope: Scope) -> Rule:
    """Rules are values: a line read once is the same rule every time ("Always allow"
    suggestions are read again for every asked command)."""
    return Rule._read(text, scope)


def parse_rules(lines: Iterable[str], scope: Scope) -> tuple[list[Rule], list[str]]:
    """Rules from settings lines, and one message per line that could not be read."""
    rules: list[Rule] = []
    problems: list[str] = []
    for line in lines:
        if not line.strip():
            continue
        try:
            rule = Rule.parse(line, scope)
        except ValueError as exc:
            problems.append(str(exc))
            continue
        if rule not in rules:
            rules.append(rule)
    return rules, problems


def rule_lines(rules: Iterable[Rule]) -> list[str]:
    return [rule.text for rule in rules]
