"""Command rules of one ACP agent (`acp:<agent>/execute: <command>`): read back from their
text, kept apart from melgui's run_command rules, and under melgui's deny rules."""

from __future__ import annotations

import pytest

from melgui.core.protocol.approval import Approve, Deny
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule


def test_an_agent_command_rule_reads_back_from_its_text() -> None:
    rule = Rule.parse("allow acp:bot/execute: git   status", "project")
    assert (rule.origin, rule.tool, rule.pattern) == ("acp:bot", "execute", "git status")
    assert Rule.parse(rule.text, "project") == rule and rule.command is not None
    assert Rule.parse("allow acp:bot/execute").command is None  # every command of it
    with pytest.raises(ValueError, match="acp:<agent>/execute: <command>"):
        Rule.parse("allow acp:bot/execute git status")
    with pytest.raises(ValueError, match="only command rules take a pattern"):
        Rule.parse("allow acp:bot/edit: a.txt")


def test_agent_and_melgui_command_rules_do_not_cross() -> None:
    policy = RulePolicy()
    policy.add_rule(Rule.parse("allow acp:bot/execute: git status", "conversation"))
    policy.add_rule(Rule.parse("allow run_command: ls", "conversation"))
    check = policy.check_operation
    assert isinstance(check("acp:bot", "execute", {"command": "git status -s"}), Approve)
    assert check("acp:other", "execute", {"command": "git status"}) is None
    assert check("acp:bot", "execute", {"command": "ls"}) is None
    assert check("melgui", "run_command", {"command": "git status"}) is None


def test_melgui_deny_rules_hold_for_agents_and_always_adds_a_rule_per_part() -> None:
    policy = RulePolicy(project="/p")
    policy.add_rule(Rule.parse("deny run_command: rm", "everywhere"))
    policy.add_rule(Rule.parse("allow acp:bot/*", "conversation"))
    denied = policy.check_operation("acp:bot", "execute", {"command": "echo a; rm -r b"})
    assert isinstance(denied, Deny) and "deny run_command: rm" in denied.reason
    rules = policy.rules_for("execute", {"command": "make && pytest -x"}, "project", "acp:bot")
    assert [r.text for r in rules] == [
        "allow acp:bot/execute: make",
        "allow acp:bot/execute: pytest",
    ]
    assert policy.rules_for("execute", {"command": "cat > /etc/x"}, "project", "acp:bot") == []
