"""The smallest set of rules that would have removed the prompts a person always
approved, never covering a call they denied.

The candidates are the rules "Always allow" would have added for each approved prompt
the draft still asks, and for a command rule with a subcommand (`git status`) also its
program alone (`git`). A candidate that covers any part of a denied call (by a person or
a rule) is dropped. The rest are chosen greedily, the one removing the most prompts not
yet removed first; of two removing as many, the narrower.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, replace

from melgui.core.protocol.judgement import Judgement
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule, RuleBook
from melgui.core.rules.rule_trial.commands import RuleTrial
from melgui.core.rules.rule_trial.replay import Replay, Replayed, arguments_of


@dataclass(frozen=True)
class Proposal:
    rule: Rule
    covers: tuple[Replayed, ...]  # the approved prompts it helps remove


def with_rules(draft: RulePolicy, rules: Sequence[Rule]) -> RulePolicy:
    """The draft with `rules` added to its everywhere scope (the draft left as it is)."""
    book = draft.book
    added = RuleBook(list(book.conversation), list(book.project), [*book.everywhere, *rules])
    return replace(draft, book=added, on_saved_change=None)


def propose(done: Replay, draft: RulePolicy) -> list[Proposal]:
    """Rules for the approved prompts `draft` still asks, none covering a denied call."""
    prompts = [r for r in done.calls if r.then == "approved" and r.now.asks]
    denied = [r for r in done.calls if r.then.startswith("denied")]
    covering: dict[str, tuple[Rule, set[int]]] = {}
    for index, prompt in enumerate(prompts):
        for rule in _candidates(prompt.now):
            covering.setdefault(rule.text, (rule, set()))[1].add(index)
    against = _Denied(denied, draft)
    safe = [(rule, covered) for rule, covered in covering.values() if not against.touched(rule)]
    return [
        Proposal(rule, tuple(prompts[i] for i in sorted(covered)))
        for rule, covered in _greedy(safe, len(prompts))
    ]


def _greedy(safe: list[tuple[Rule, set[int]]], count: int) -> list[tuple[Rule, set[int]]]:
    """The rule removing the most prompts not yet removed first, until none removes more."""
    chosen: list[tuple[Rule, set[int]]] = []
    left = set(range(count))
    while left:
        best = max(safe, key=lambda s: (len(s[1] & left), len(s[1])), default=None)
        if best is None or not best[1] & left:
            break
        chosen.append(best)
        left -= best[1]
    return chosen


def _candidates(judgement: Judgement) -> list[Rule]:
    out: list[Rule] = []
    for judged in judgement.always.get("everywhere", ()):
        rule = Rule.parse(judged.text, "everywhere")
        out.append(rule)  # first: of two rules removing as many prompts, the narrower
        command = rule.command
        if command is not None and len(command.words) > 1 and command.named == set(command.words):
            out.append(Rule.parse(f"allow {rule.tool}: {command.program}", "everywhere"))
    return out


_WORD_BREAKS = re.compile(r"[\s;|&()<>/=`${}]+")


class _Denied:
    """The denied calls, indexed by tool and by the words of a command, so a candidate
    is checked only against the denied calls that name its program."""

    def __init__(self, denied: list[Replayed], draft: RulePolicy) -> None:
        self.trial = RuleTrial((), draft.project)
        self.origin_of = draft.origin_of
        self.by_tool: dict[str, list[tuple[Replayed, str | None]]] = {}
        self.by_word: dict[str, list[str]] = {}  # a word: the denied commands with it
        for replayed in denied:
            command = arguments_of(replayed.call).get("command")
            text = command if isinstance(command, str) else None
            self.by_tool.setdefault(replayed.call.name, []).append((replayed, text))
            for word in set(_WORD_BREAKS.split(_unquoted(text or ""))):
                self.by_word.setdefault(word, []).append(text or "")

    def touched(self, rule: Rule) -> bool:
        """`rule` alone would allow a denied call or a part of one, whatever else denies it."""
        for name, calls in self.by_tool.items():
            if not rule.covers_tool(self.origin_of(name), name):
                continue
            if rule.command is None or any(text is None for _, text in calls):
                return True
            program = rule.command.program
            words = self.by_word.get(program, [])
            if _WORD_BREAKS.search(program):  # `./run.sh`: not one word of the index
                words = [text or "" for _, text in calls]
            if any(self.trial.touches(rule, text) for text in words):
                return True
        return False


def _unquoted(command: str) -> str:
    """A command without quotes or escapes, so a program's name shows as one word
    however it is written (`g"i"t`)."""
    return command.replace('"', "").replace("'", "").replace("\\", "")
