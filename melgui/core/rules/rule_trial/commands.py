"""A rule tried on past commands, for the rule editor: each command read once.

The editor tries the rule being typed at every keystroke; the commands are parsed the
first time and judged against the one rule after that.
"""

from __future__ import annotations

from collections.abc import Iterable

from melgui.core.rules.command_check import judge_parsed
from melgui.core.rules.rule_scopes import Rule
from melgui.core.rules.shell_parse import ParsedShell, parse_shell


class RuleTrial:
    def __init__(self, history: Iterable[str], project: str) -> None:
        self.history = list(history)
        self.project = project
        self._parsed: dict[str, ParsedShell] = {}

    def _read(self, command: str) -> ParsedShell:
        parsed = self._parsed.get(command)
        if parsed is None:
            parsed = self._parsed[command] = parse_shell(command)
        return parsed

    def matched(self, rule: Rule) -> list[str]:
        """The past commands `rule` would have decided on its own (allowed or denied)."""
        allow, deny = ([rule], []) if rule.effect == "allow" else ([], [rule])
        return [
            c
            for c in self.history
            if judge_parsed(self._read(c), allow, deny, self.project).verdict == rule.effect
        ]

    def asked(self, rule: Rule, command: str) -> list[tuple[str, str]]:
        """What `rule` alone leaves asked in `command`: (part, why) for each part."""
        judgement = judge_parsed(self._read(command), [rule], [], self.project)
        return [(p.text, p.reason) for p in judgement.asked]

    def touches(self, rule: Rule, command: str) -> bool:
        """`rule` alone decides `command` or one of its parts (a deny rule aside)."""
        allow, deny = ([rule], []) if rule.effect == "allow" else ([], [rule])
        judgement = judge_parsed(self._read(command), allow, deny, self.project)
        return any(p.rule == rule and p.verdict == rule.effect for p in judgement.parts)


def commands_matched(rule: Rule, history: Iterable[str], project: str) -> list[str]:
    """Which past commands a command rule would have allowed on its own (rule editor)."""
    return RuleTrial(history, project).matched(rule)
