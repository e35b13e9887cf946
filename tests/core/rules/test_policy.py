"""Approval policies: defaults, rules in scopes, deny wins, other agents, the sandbox."""

from __future__ import annotations

import json
from typing import Any

import pytest

from melgui.core.protocol.approval import Approve, Decision, Deny
from melgui.core.protocol.events import ToolCall
from melgui.core.rules.command_check import CommandJudgement, Part
from melgui.core.rules.policy import (
    SANDBOX_RULE,
    FixedPolicy,
    RulePolicy,
    is_readable,
)
from melgui.core.rules.rule_scopes import Rule, RuleBook, parse_rules
from melgui.core.rules.rule_trial.commands import commands_matched


def call(name: str, **arguments: object) -> tuple[ToolCall, dict[str, object]]:
    return ToolCall("id", name, json.dumps(arguments)), arguments


def rules(*lines: str, scope: str = "everywhere") -> list[Rule]:
    parsed, problems = parse_rules(lines, scope)  # type: ignore[arg-type]
    assert problems == []
    return parsed


def approved(decision: object) -> str:
    assert isinstance(decision, Approve), decision
    return decision.rule


def test_defaults_follow_the_product_doc() -> None:
    policy = RulePolicy()
    assert "read_file" in approved(policy.check(*call("read_file", path="a")))
    assert isinstance(policy.check(*call("list_panes")), Approve)
    for name in ("write_file", "edit_file", "run_command", "web_search", "create_pdf",
                 "remember", "open_pane", "spawn_agent", "send_keys", "send_agent"):  # fmt: skip
        assert policy.check(*call(name)) is None, name
    assert policy.check(*call("a_tool_nobody_knows")) is None


def test_rule_lines_round_trip_and_bad_lines_say_why() -> None:
    lines = [
        "allow run_command: git status",
        "deny run_command: rm",
        "allow write_file",
        "allow mcp:github/create_issue",
        "deny acp:claude/*",
        "allow run_command: find ... -delete",
    ]
    assert [rule.text for rule in rules(*lines)] == lines
    _, problems = parse_rules(
        ["permit ls", "allow run_command", "allow run_command: ls | sh", "allow write_file: x",
         "allow mcp:github", "allow run_command: find ..."],
        "project",
    )  # fmt: skip
    assert len(problems) == 6
    assert "'allow' or 'deny'" in problems[0] and "no shell syntax" in problems[2]


def test_a_compound_command_runs_when_every_part_is_covered_and_says_by_what() -> None:
    book = RuleBook(everywhere=rules("allow run_command: git status", "allow run_command: wc"))
    book.project.extend(rules("allow run_command: grep", scope="project"))
    policy = RulePolicy(book=book, project="/p")
    why = approved(policy.check(*call("run_command", command="git status | grep M | wc -l")))
    assert why == (
        "allow run_command: git status (everywhere); allow run_command: grep (this project); "
        "allow run_command: wc (everywhere)"
    )
    assert policy.check(*call("run_command", command="git status; git push")) is None


def test_deny_rules_win_in_any_scope() -> None:
    book = RuleBook(conversation=rules("allow run_command: make", scope="conversation"))
    book.everywhere.extend(rules("deny run_command: rm", "allow write_file", "deny write_file"))
    policy = RulePolicy(book=book, modes={"run_command": "auto"}, sandbox_answers=lambda: True)
    denied = policy.check(*call("run_command", command="make && sudo rm -rf /"))
    assert isinstance(denied, Deny) and "deny run_command: rm" in denied.reason
    assert isinstance(policy.check(*call("write_file", path="a")), Deny)


def test_always_allow_adds_rules_for_the_asked_parts_in_the_chosen_scope() -> None:
    saved: list[str] = []
    book = RuleBook(everywhere=rules("allow run_command: ls"))
    policy = RulePolicy(book=book, project="/p", on_saved_change=lambda: saved.append("x"))
    command = call("run_command", command="ls && pytest -q tests | sed -i s/a/b/ out")
    learn(policy, command, Approve("project"))
    assert [r.text for r in book.project] == [
        "allow run_command: pytest",
        "allow run_command: sed ... -i",
    ]
    assert saved == ["x"]
    assert approved(policy.check(*command))
    learn(policy, call("write_file", path="a"), Approve("session"))
    assert [r.text for r in book.conversation] == ["allow write_file"] and saved == ["x"]
    learn(policy, call("edit_file"), Approve("once"))
    assert policy.check(*call("edit_file")) is None


def test_parts_no_rule_can_cover_make_no_rule() -> None:
    policy = RulePolicy(project="/p")
    for command in ("ls > /etc/motd", "echo 'unterminated", "PATH=/x ls", "$CMD"):
        learn(policy, call("run_command", command=command), Approve("saved"))
    assert list(policy.book) == []


def test_other_agents_are_answered_by_rules_scoped_to_their_origin() -> None:
    book = RuleBook(everywhere=rules("allow mcp:github/list_issues", "deny acp:claude/*"))
    policy = RulePolicy(book=book, origin_of=lambda name: "mcp:github")
    assert "mcp:github/list_issues" in approved(
        policy.check_operation("mcp:github", "list_issues", {})
    )
    assert policy.check_operation("mcp:gitlab", "list_issues", {}) is None
    assert policy.check_operation("mcp:github", "create_issue", {}) is None
    assert isinstance(policy.check_operation("acp:claude", "edit", {"path": "x"}), Deny)
    assert isinstance(policy.check(*call("list_issues")), Approve)  # origin from the catalog
    policy.record_operation("acp:codex", "edit", {"path": "a"}, Approve("project"))
    assert [r.text for r in policy.book.project] == ["allow acp:codex/edit"]
    assert isinstance(policy.check_operation("acp:codex", "edit", {"path": "b"}), Approve)
    # a tool of another origin named like a built-in one is not allowed by its mode
    assert policy.check_operation("mcp:x", "read_file", {}) is None


def test_the_sandbox_answers_only_what_the_rules_leave_open() -> None:
    book = RuleBook(everywhere=rules("deny run_command: curl"))
    on = [False]
    policy = RulePolicy(book=book, project="/p", sandbox_answers=lambda: on[0])
    assert policy.check(*call("run_command", command="make install")) is None
    on[0] = True
    assert approved(policy.check(*call("run_command", command="make install"))) == SANDBOX_RULE
    assert isinstance(policy.check(*call("run_command", command="curl x | sh")), Deny)


def test_rule_editor_history() -> None:
    history = ["git status", "git status -s", "git push", "git status && ls", "sudo git status"]
    (rule,) = rules("allow run_command: git status")
    assert commands_matched(rule, history, "/p") == ["git status", "git status -s"]
    (deny,) = rules("deny run_command: git")
    assert commands_matched(deny, history, "/p") == history


@pytest.mark.parametrize("mode", ["reads", "all", "none"])
def test_fixed_policies(mode: str) -> None:
    policy = FixedPolicy(mode)  # type: ignore[arg-type]
    command = policy.check(*call("run_command", command="x"))
    grep = policy.check(*call("grep", pattern="x"))
    assert isinstance(command, Approve) == (mode == "all")
    assert isinstance(grep, Approve) == (mode != "none")
    if isinstance(command, Deny):
        assert f"--approve {mode}" in command.reason


def test_rules_allow_nothing_in_a_shell_they_cannot_read() -> None:
    book = RuleBook(everywhere=rules("allow run_command: ls", "deny run_command: rm"))
    policy = RulePolicy(book=book, project="/p", shell="fish")
    assert policy.check(*call("run_command", command="ls")) is None
    assert "fish" in policy.judge("ls").parts[0].reason
    assert isinstance(policy.check(*call("run_command", command="rm x")), Deny)
    assert isinstance(
        RulePolicy(book=book, shell="zsh").check(*call("run_command", command="ls")), Approve
    )


def test_headless_modes_name_the_flag_that_decided() -> None:
    read, write = call("read_file", path="a"), call("write_file", path="a")
    assert FixedPolicy("all").check(*write) == Approve(rule="melgui exec --approve all")
    assert FixedPolicy("reads").check(*read) == Approve(rule="melgui exec --approve reads")
    assert FixedPolicy("reads").check(*write) == Deny(
        "headless run with --approve reads: write_file is not allowed"
    )
    assert FixedPolicy("none").check(*read) == Deny(
        "headless run with --approve none: read_file is not allowed"
    )


def test_command_decisions_say_exactly_why() -> None:
    policy = RulePolicy(project="/p")
    assert policy.check(*call("run_command", command="X=1")) == Approve(
        rule="plain variable assignments"
    )
    assert policy.check(*call("run_command", command="make")) is None
    policy.modes["run_command"] = "auto"
    assert policy.check(*call("run_command", command="make")) == Approve(
        rule="run_command: run without asking (tool setting)"
    )
    policy.book.add(Rule.parse("deny run_command: make", "project"))
    assert policy.check(*call("run_command", command="make")) == Deny(
        "denied by the rule “deny run_command: make” (project)"
    )


def test_a_project_rule_counts_when_the_rule_must_last_for_the_project() -> None:
    policy = RulePolicy(book=RuleBook(project=rules("allow run_command: ls", scope="project")))
    assert policy.judge("ls", "project").verdict == "allow"
    assert policy.judge("ls", "everywhere").verdict == "ask"
    inside = RulePolicy(book=RuleBook(everywhere=rules("allow run_command: ls")), project="/p")
    assert inside.judge("ls > out.txt").verdict == "allow"  # out.txt is in /p
    assert inside.judge("ls > /q/out.txt").verdict == "ask"


def test_a_shell_the_rules_cannot_read_asks_for_the_whole_line_first() -> None:
    book = RuleBook(everywhere=rules("allow run_command: ls"))
    read = RulePolicy(book=book, project="/p").judge("ls")
    judged = RulePolicy(book=book, project="/p", shell="fish").judge("ls")
    why = "commands run in fish, whose syntax the rules do not read"
    assert judged == CommandJudgement("ls", "ask", (Part("ls", 0, 2, "ask", why), *read.parts))


def test_saving_is_announced_only_for_a_new_rule_that_outlives_the_conversation() -> None:
    saved: list[str] = []
    policy = RulePolicy(on_saved_change=lambda: saved.append("saved"))
    policy.add_rule(Rule.parse("allow write_file", "conversation"))
    assert saved == []
    policy.add_rule(Rule.parse("allow edit_file", "project"))
    assert saved == ["saved"]
    policy.add_rule(Rule.parse("allow edit_file", "project"))  # already there
    assert saved == ["saved"]
    RulePolicy().add_rule(Rule.parse("allow edit_file", "project"))  # nobody to tell


def test_tools_of_other_origins_are_judged_and_learned_under_their_origin() -> None:
    origin = {"list": "mcp:files", "run_command": "mcp:files"}
    policy = RulePolicy(
        origin_of=lambda name: origin.get(name, "melgui"),
        runtime_default=lambda name: "auto" if name == "list" else "ask",
        project="/p",
    )
    assert policy.check(*call("list")) == Approve(
        rule="list: read-only, from a server marked trusted"
    )
    # An MCP tool that happens to be called run_command is not read as a shell command.
    mcp_command = call("run_command", command="ls")
    assert policy.check(*mcp_command) is None
    learn(policy, mcp_command, Approve("session"))
    assert [r.text for r in policy.book.conversation] == ["allow mcp:files/run_command"]
    assert policy.check(*mcp_command) == Approve(rule=policy.book.conversation[0].describe())
    # A trusted server's default never reaches melgui's own tools.
    trusting = RulePolicy(runtime_default=lambda name: "auto")
    assert trusting.check(*call("write_file", path="a")) is None


def test_commands_matched_keeps_redirections_to_the_project() -> None:
    rule = Rule.parse("allow run_command: ls", "everywhere")
    history = ["ls > out.txt", "ls > /etc/motd", "cat x"]
    assert commands_matched(rule, history, "/p") == ["ls > out.txt"]
    assert is_readable("ls | grep x") is True
    assert is_readable("echo 'unterminated") is False


def learn(policy: RulePolicy, asked: tuple[ToolCall, dict[str, Any]], decision: Decision) -> None:
    """A person's answer to the call as it was asked: the policy learns from its judgement."""
    call, arguments = asked
    policy.record(call, policy.judge_call(call, arguments), decision)


@pytest.mark.parametrize(
    "command", ["bacon run|test|clippy|...", "ansible-doc -t become|... plugin_name"]
)
def test_a_command_no_rule_can_be_made_for_is_asked_without_always(command: str) -> None:
    """Placeholder words of documentation examples ("...") make no rule: the call is
    asked, and "Always allow" has no rule for the part they are in."""
    policy = RulePolicy(project="/p")
    judgement = policy.judge_call(*call("run_command", command=command))
    assert judgement.asks
    for rules_of_scope in judgement.always.values():
        assert all("..." not in r.pattern.split()[:1] for r in rules_of_scope)
