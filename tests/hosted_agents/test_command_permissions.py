"""An ACP agent's `execute` permission requests judged by melgui's command rules, against
tests/fakes/acp_scripted_agent.py: melgui's deny rules apply, "always" grants a rule per
part of the command (never the whole tool kind), for that agent only."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule
from melgui.desk.hosted_agents.host import AcpHost
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 30


def execute(command: str | list[str], title: str = "Run a command") -> dict[str, Any]:
    return {"ask": "execute", "title": title, "command": command}


class Person:
    """Answers each request with the agent's option of the next kind, keeping them."""

    def __init__(self, *kinds: str) -> None:
        self.kinds = list(kinds)
        self.asked: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> None:
        self.asked.append(request)
        kind = self.kinds.pop(0)
        request.choose(next(o.option_id for o in request.options if o.kind == kind))


async def session(tmp_path: Path, policy: RulePolicy, person: Person, name: str) -> AcpHost:
    host = AcpHost(scripted_agent(name=name), str(tmp_path), policy=policy, ask=person)
    await asyncio.wait_for(host.start(), LIMIT)
    return host


async def play(host: AcpHost, *steps: dict[str, Any]) -> Events:
    events = Events()
    unsubscribe = host.subscribe(events)
    try:
        assert await asyncio.wait_for(host.prompt(json.dumps(list(steps))), LIMIT) == "end_turn"
    finally:
        unsubscribe()
    return events


async def test_always_allow_grants_the_command_not_every_command(tmp_path: Path) -> None:
    policy = RulePolicy(project=str(tmp_path))
    person = Person("allow_always", "allow_once")
    host = await session(tmp_path, policy, person, "bot")
    try:
        first = await play(host, execute("git status && pytest -q"))
        again = await play(host, execute("git status"), execute(["pytest", "-q"]))
        other = await play(host, execute("rm -rf build"))
    finally:
        await host.aclose()
    assert "permission:always" in first.text()
    assert sorted(r.text for r in policy.book) == [
        "allow acp:bot/execute: git status",
        "allow acp:bot/execute: pytest",
    ]
    # both parts are covered now, an argv list as a line; a new command is asked
    assert again.text().count("permission:yes") == 2
    assert "permission:yes" in other.text()
    assert [r.arguments["command"] for r in person.asked] == [
        "git status && pytest -q",
        "rm -rf build",
    ]
    assert host.gate.answered_by_rules == [
        "allow acp:bot/execute: git status (this conversation)",
        "allow acp:bot/execute: pytest (this conversation)",
    ]


async def test_melgui_deny_rules_answer_an_agents_command(tmp_path: Path) -> None:
    policy = RulePolicy(project=str(tmp_path))
    policy.add_rule(Rule.parse("deny run_command: rm", "project"))
    policy.add_rule(Rule.parse("allow acp:bot/*", "conversation"))  # even under a wide grant
    person = Person()
    host = await session(tmp_path, policy, person, "bot")
    try:
        events = await play(
            host,
            execute("cd build && rm -rf *"),
            execute("ls", title="ls"),
        )
    finally:
        await host.aclose()
    assert events.text() == "permission:nopermission:yes"  # rm by melgui's rule, then ls
    assert person.asked == []
    assert "denied by the rule “deny run_command: rm” (project)" in host.gate.answered_by_rules[0]


async def test_a_command_no_rule_can_cover_is_allowed_once_only(tmp_path: Path) -> None:
    policy = RulePolicy(project=str(tmp_path))
    person = Person("allow_always", "reject_once")
    host = await session(tmp_path, policy, person, "bot")
    try:
        first = await play(host, execute("cat notes > /etc/elsewhere"))
        second = await play(host, execute("cat notes > /etc/elsewhere"))
    finally:
        await host.aclose()
    # the agent heard "once", so it does not remember an "always" melgui refused
    assert "permission:yes" in first.text() and "permission:no" in second.text()
    assert list(policy.book) == []
    notes = [e.text for e in first.of("context_notice")]
    assert notes == [
        "Allowed once only: no rule can cover every part of “cat notes > /etc/elsewhere”."
    ]


async def test_a_grant_to_one_agent_does_not_answer_another(tmp_path: Path) -> None:
    policy = RulePolicy(project=str(tmp_path))
    person = Person("allow_always", "reject_always", "reject_once")
    one = await session(tmp_path, policy, person, "one")
    two = await session(tmp_path, policy, person, "two")
    try:
        await play(one, execute("make test"))
        denied = await play(two, execute("make test"))
        again = await play(two, execute("make test"), execute("make docs"))
    finally:
        await one.aclose()
        await two.aclose()
    assert "permission:never" in denied.text()
    assert sorted(r.text for r in policy.book) == [
        "allow acp:one/execute: make test",
        "deny acp:two/execute: make test",
    ]
    # two's rejection holds for its `make test` only (by the rule): `make docs` is asked
    assert again.text() == "permission:nopermission:no"
    asked = [(r.call.id, r.arguments["command"]) for r in person.asked]
    assert asked == [("t1", "make test"), ("t1", "make test"), ("t3", "make docs")]
