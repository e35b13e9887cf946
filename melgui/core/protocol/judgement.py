"""What a policy made of one call, judged once and kept on the call.

A `Judgement` is the one answer a policy gives for a call: allowed, denied, or asked, with
who decided (`source`) and why (`reason`). For a command it keeps the parts as the rules
read them, and for an asked call the rules "Always allow" would add in each scope. The
call's card, the inspector, the "Always allow" menu, the policy's `record` and the ACP
answers read this value; nobody judges the call again (`approval.decision_of` turns it
into the loop's Decision).

`source` is open: "rule" (a rule of the book), "tool setting", "sandbox", "trusted
server", "headless", "client" (an ACP client's standing rejection), and the ones that
plug in later (a folder's trust, a hook, a conversation scope) name themselves the same
way. An asked call has source "" until a person answers.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

Verdict = Literal["allow", "deny", "ask"]
RuleScope = Literal["conversation", "project", "everywhere"]
ASKED = ""  # the source of a judgement that leaves the call to a person


@dataclass(frozen=True, slots=True)
class JudgedRule:
    """A rule as a judgement names it: its line, its scope, and a command rule's words."""

    text: str  # "allow run_command: git status"
    scope: RuleScope
    pattern: str = ""


@dataclass(frozen=True, slots=True)
class JudgedPart:
    """One simple command or redirection of a command line, and what decided it."""

    text: str
    start: int  # character offsets into the command line
    end: int
    verdict: Verdict
    reason: str
    rule: JudgedRule | None = None


@dataclass(frozen=True)
class Judgement:
    verdict: Verdict
    source: str = ASKED
    reason: str = ""  # allowed: the rule(s) in words; denied: why; asked: why, if known
    command: str = ""  # a command line read part by part ("" for other tools)
    parts: tuple[JudgedPart, ...] = ()
    # The rules "Always allow" would add, per scope; a scope missing: no rule covers it.
    always: Mapping[RuleScope, tuple[JudgedRule, ...]] = field(default_factory=dict)
    learns: bool = False  # the policy keeps rules, so "Always allow" can mean something
    sandboxed: bool = False  # run_command would run in the sandbox

    @property
    def asks(self) -> bool:
        return self.verdict == "ask"


def allowed(source: str, reason: str) -> Judgement:
    return Judgement("allow", source, reason)


def denied(source: str, reason: str) -> Judgement:
    return Judgement("deny", source, reason)


ASK = Judgement("ask")
