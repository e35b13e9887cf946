"""Approval policies: per-tool auto/ask with remembered approvals, and fixed headless modes."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from melgui.core.protocol.approval import Approve, Decision, Deny
from melgui.core.protocol.catalog import DEFAULT_MODES, READ_ONLY_TOOLS, Mode
from melgui.core.protocol.events import ToolCall

_COMPOUND_MARKS = ("&", "|", ";", "<", ">", "`", "$", "(", ")", "\n", "\r", "\\")


def is_simple_command(command: str) -> bool:
    """True for one plain command: no chaining, pipes, substitution or redirection.

    Deliberately conservative: a mark inside quotes still counts, so such commands are
    asked again rather than matched by a prefix rule.
    """
    if not command.strip() or any(mark in command for mark in _COMPOUND_MARKS):
        return False
    try:
        return bool(shlex.split(command))
    except ValueError:
        return False


def command_words(command: str) -> list[str]:
    try:
        return shlex.split(command)
    except ValueError:
        return []


def suggested_prefix(command: str) -> str:
    """The rule "always allow" proposes: the program and a plain subcommand, if any."""
    words = command_words(command)
    if not words:
        return command.strip()
    chosen = words[:1]
    if (
        len(words) > 1
        and words[1].replace("-", "").replace("_", "").isalnum()
        and not (words[1].startswith("-") or "/" in words[1] or "." in words[1])
    ):
        chosen.append(words[1])
    return shlex.join(chosen)


def prefix_matches(prefix: str, command: str) -> bool:
    """Word-wise prefix match of a saved rule, only for simple commands."""
    if not is_simple_command(command):
        return False
    rule, words = command_words(prefix), command_words(command)
    return bool(rule) and words[: len(rule)] == rule


@dataclass
class RulePolicy:
    """Per-tool modes plus approvals remembered for the session or saved.

    `on_saved_change` is called after a saved rule is added, so settings can persist it.
    """

    modes: dict[str, Mode] = field(default_factory=lambda: dict(DEFAULT_MODES))
    saved_tools: set[str] = field(default_factory=set)
    saved_command_prefixes: list[str] = field(default_factory=list)
    session_tools: set[str] = field(default_factory=set)
    session_command_prefixes: list[str] = field(default_factory=list)
    on_saved_change: Callable[[], None] | None = None

    def check(self, call: ToolCall, arguments: dict[str, Any]) -> Decision | None:
        if call.name == "run_command":
            command = arguments.get("command")
            if isinstance(command, str) and any(
                prefix_matches(p, command)
                for p in (*self.saved_command_prefixes, *self.session_command_prefixes)
            ):
                return Approve()
        elif call.name in self.saved_tools or call.name in self.session_tools:
            return Approve()
        if self.modes.get(call.name, "ask") == "auto":
            return Approve()
        return None

    def record(self, call: ToolCall, arguments: dict[str, Any], decision: Decision) -> None:
        if not isinstance(decision, Approve) or decision.remember == "once":
            return
        saved = decision.remember == "saved"
        if call.name == "run_command":
            command = arguments.get("command")
            if not isinstance(command, str) or not is_simple_command(command):
                return  # a compound command is never turned into a rule
            rules = self.saved_command_prefixes if saved else self.session_command_prefixes
            prefix = suggested_prefix(command)
            if prefix not in rules:
                rules.append(prefix)
        else:
            (self.saved_tools if saved else self.session_tools).add(call.name)
        if saved and self.on_saved_change is not None:
            self.on_saved_change()


def commands_matched(prefix: str, history: Iterable[str]) -> list[str]:
    """Which past commands a rule would have allowed (for the rule editor)."""
    return [command for command in history if prefix_matches(prefix, command)]


HeadlessMode = Literal["reads", "all", "none"]


@dataclass(frozen=True)
class FixedPolicy:
    """`melgui exec --approve`: decides every call without asking anyone."""

    mode: HeadlessMode = "reads"

    def check(self, call: ToolCall, arguments: dict[str, Any]) -> Decision:
        if self.mode == "all":
            return Approve()
        if self.mode == "reads" and call.name in READ_ONLY_TOOLS:
            return Approve()
        return Deny(f"headless run with --approve {self.mode}: {call.name} is not allowed")

    def record(self, call: ToolCall, arguments: dict[str, Any], decision: Decision) -> None:
        return None
