"""A draft rule set replayed on the recorded calls, side by side with what happened.

Each recorded call is judged by the draft policy as the loop would judge it now, and
set beside its stored decision: the prompts the draft would have removed, the calls it
would have let run that were denied or edited (by a hook) back then, and the calls that
ran back then that it would now deny. The same call (tool and arguments) is judged once per replay.
"""

from __future__ import annotations

from collections.abc import Iterable
from contextlib import suppress
from dataclasses import dataclass, replace
from typing import Any, Literal

from melgui.core.protocol import bounded_json
from melgui.core.protocol.call_life import AUTO_BY
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import Judgement
from melgui.core.protocol.views.scopes import Scope
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import BUILTIN, Effect, Rule, RuleBook
from melgui.core.store.records import RecordedCall

# What happened to a call back then: it ran without asking, a person approved or denied
# it when asked, or a rule denied it.
Happened = Literal["ran", "approved", "denied", "denied by rule"]


def happened(call: RecordedCall) -> Happened | None:
    """What the stored decision says; None for a call never decided (cut off)."""
    decision = call.decision
    if decision == "auto" or decision.startswith(AUTO_BY):
        return "ran"
    if decision.startswith("approved"):
        return "approved"
    if decision == "denied":
        return "denied" if call.decided_at is not None else "denied by rule"
    return None


@dataclass(frozen=True, slots=True)
class Replayed:
    call: RecordedCall
    then: Happened
    now: Judgement

    @property
    def was_asked(self) -> bool:
        return self.then in ("approved", "denied")

    @property
    def edited(self) -> bool:
        """A hook changed its arguments back then: it ran with others than the model's."""
        return self.call.ran_arguments is not None


@dataclass(frozen=True)
class Replay:
    calls: tuple[Replayed, ...]

    @property
    def removed_prompts(self) -> list[Replayed]:
        """Calls a person was asked about that the draft decides without asking."""
        return [r for r in self.calls if r.was_asked and not r.now.asks]

    @property
    def let_run_denied(self) -> list[Replayed]:
        """Calls denied back then (by a person or a rule) that the draft allows."""
        return [r for r in self.calls if r.then.startswith("denied") and r.now.verdict == "allow"]

    @property
    def let_run_edited(self) -> list[Replayed]:
        """Calls that ran edited back then (a hook changed the arguments) that the draft
        allows as the model wrote them."""
        return [r for r in self.calls if r.edited and r.now.verdict == "allow"]

    @property
    def now_denied(self) -> list[Replayed]:
        """Calls that ran back then (asked or not) that the draft denies."""
        return [r for r in self.calls if r.then in ("ran", "approved") and r.now.verdict == "deny"]


def arguments_of(call: RecordedCall) -> dict[str, Any]:
    """The call's arguments as an object; {} when they were not one."""
    with suppress(ValueError, TypeError):
        decoded = bounded_json.loads(call.arguments)
        if isinstance(decoded, dict):
            return decoded
    return {}


class DraftBook(RuleBook):
    """A rule book that does not change while it is tried: the rules the policy asks for
    a tool or an effect are collected once."""

    def __init__(self, book: RuleBook) -> None:
        super().__init__(list(book.conversation), list(book.project), list(book.everywhere))
        self._commands: dict[tuple[Effect, str, Scope], list[Rule]] = {}
        self._tools: dict[tuple[str, str], list[Rule]] = {}

    def commands(
        self, effect: Effect, origin: str = BUILTIN, lasting: Scope = "conversation"
    ) -> list[Rule]:
        key = (effect, origin, lasting)
        if key not in self._commands:
            self._commands[key] = super().commands(effect, origin, lasting)
        return list(self._commands[key])

    def for_tool(self, origin: str, tool: str) -> list[Rule]:
        key = (origin, tool)
        if key not in self._tools:
            self._tools[key] = super().for_tool(origin, tool)
        return list(self._tools[key])


class Judge:
    """One policy judging recorded calls, each distinct call once (its rules as they
    were when the judge was made)."""

    def __init__(self, policy: RulePolicy) -> None:
        self.policy = replace(policy, book=DraftBook(policy.book), on_saved_change=None)
        self._seen: dict[tuple[str, str], Judgement] = {}

    def __call__(self, call: RecordedCall) -> Judgement:
        key = (call.name, call.arguments)
        judgement = self._seen.get(key)
        if judgement is None:
            tool_call = ToolCall(call.call_id, call.name, call.arguments)
            judgement = self._seen[key] = self.policy.judge_call(tool_call, arguments_of(call))
        return judgement


def replay(calls: Iterable[RecordedCall], draft: RulePolicy) -> Replay:
    """Every decided call judged by `draft`, beside what happened to it."""
    judge = Judge(draft)
    out: list[Replayed] = []
    for call in calls:
        then = happened(call)
        if then is not None:
            out.append(Replayed(call, then, judge(call)))
    return Replay(tuple(out))
