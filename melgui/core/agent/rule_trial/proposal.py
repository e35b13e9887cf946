"""The smallest set of rules that would have removed the prompts a person always
approved, never covering a call they denied.

The candidates are the rules "Always allow" would have added for each approved prompt
the draft still asks, and for a command rule with a subcommand (`git status`) also its
program alone (`git`). A candidate that covers any part of a denied call (by a person or
a rule) is dropped. The rest are chosen greedily, the one removing the most prompts not
yet removed first, and a chosen rule the others make unneeded is left out at the end.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from melgui.core.agent.policy import RulePolicy
from melgui.core.agent.rule_scopes import Rule, RuleBook
from melgui.core.agent.rule_trial.commands import RuleTrial
from melgui.core.agent.rule_trial.replay import Judge, Replay, Replayed, arguments_of
from melgui.core.protocol.judgement import Judgement


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
    touched: dict[str, tuple[Rule, set[int]]] = {}
    for prompt in prompts:
        for rule in _candidates(prompt.now):
            touched.setdefault(rule.text, (rule, set()))
    trial = RuleTrial((), draft.project)
    safe: list[tuple[Rule, set[int]]] = []
    for rule, covered in touched.values():
        if any(_touches(trial, rule, d, draft) for d in denied):
            continue
        judge = Judge(with_rules(draft, [rule]))
        covered.update(i for i, p in enumerate(prompts) if _covers(judge(p.call), rule))
        if covered:
            safe.append((rule, covered))
    chosen = _greedy(safe, prompts, draft)
    return [
        Proposal(rule, tuple(prompts[i] for i in sorted(covered)))
        for rule, covered in safe
        if rule in chosen
    ]


def _greedy(
    safe: list[tuple[Rule, set[int]]], prompts: list[Replayed], draft: RulePolicy
) -> list[Rule]:
    chosen: list[Rule] = []
    left = set(range(len(prompts)))
    while left:
        best = max(safe, key=lambda s: (len(s[1] & left), len(s[1])), default=None)
        if best is None or not best[1] & left:
            break
        chosen.append(best[0])
        left -= best[1]
    removed = _removed(chosen, prompts, draft)
    for rule in list(chosen):
        rest = [r for r in chosen if r != rule]
        if _removed(rest, prompts, draft) >= removed:
            chosen = rest
    return chosen


def _removed(rules: list[Rule], prompts: list[Replayed], draft: RulePolicy) -> int:
    judge = Judge(with_rules(draft, rules))
    return sum(1 for p in prompts if judge(p.call).verdict == "allow")


def _candidates(judgement: Judgement) -> list[Rule]:
    out: list[Rule] = []
    for judged in judgement.always.get("everywhere", ()):
        rule = Rule.parse(judged.text, "everywhere")
        out.append(rule)  # first: of two rules removing as many prompts, the narrower
        command = rule.command
        if command is not None and len(command.words) > 1 and command.named == set(command.words):
            out.append(Rule.parse(f"allow {rule.tool}: {command.program}", "everywhere"))
    return out


def _covers(judgement: Judgement, rule: Rule) -> bool:
    """`judgement` (made with `rule` added) has `rule` decide the call or one of its parts."""
    if any(p.rule is not None and p.rule.text == rule.text for p in judgement.parts):
        return True
    return judgement.verdict == "allow" and rule.text in judgement.reason


def _touches(trial: RuleTrial, rule: Rule, denied: Replayed, draft: RulePolicy) -> bool:
    """`rule` alone would allow the denied call or a part of it, whatever else denies it."""
    call = denied.call
    origin = draft.origin_of(call.name)
    if not rule.covers_tool(origin, call.name):
        return False
    command = arguments_of(call).get("command")
    if rule.command is None or not isinstance(command, str):
        return True
    return trial.touches(rule, command)
