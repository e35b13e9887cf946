"""The desk's rules: loaded from settings per project, shared with workers, saved back."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from melgui.core.config.settings import Settings
from melgui.core.protocol.approval import Approve, Decision, Deny
from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.events import ToolCall
from melgui.core.rules.policy import RulePolicy
from melgui.core.rules.rule_scopes import Rule
from melgui.core.transports.connection import make_transport
from melgui.desk.desk import Desk


def make_desk(folder: Path, settings: Settings, saved: list[str]) -> Desk:
    transport = make_transport(Settings(connection="relay", relay_url="http://127.0.0.1:9"), "k")
    return Desk(
        str(folder),
        settings,
        api_key="k",
        plans=lambda title, markdown: None,
        transport=transport,
        on_rules_saved=lambda: saved.append("saved"),
    )


def run_command(command: str) -> tuple[ToolCall, dict[str, object]]:
    arguments = {"command": command}
    return ToolCall("c", "run_command", json.dumps(arguments)), arguments


def test_rules_come_from_settings_per_project_and_go_back_when_saved(tmp_path: Path) -> None:
    here, there = tmp_path / "here", tmp_path / "there"
    here.mkdir()
    there.mkdir()
    settings = Settings(
        rules=["deny run_command: rm", "not a rule"],
        project_rules={str(here): ["allow run_command: make"], str(there): ["allow write_file"]},
    )
    saved: list[str] = []
    desk = make_desk(here, settings, saved)
    assert desk.rule_problems and "'allow' or 'deny'" in desk.rule_problems[0]
    assert isinstance(desk.policy.check(*run_command("make && make test")), Approve)
    assert isinstance(desk.policy.check(*run_command("make && rm -rf /")), Deny)

    worker = desk.worker_policy()
    learn(worker, run_command("pytest -q"), Approve("session"))  # the worker's own
    assert desk.policy.check(*run_command("pytest -q")) is None
    # another worker, asked the same: its project rule is shared, and saved
    learn(desk.worker_policy(), run_command("pytest -q"), Approve("project"))
    assert isinstance(desk.policy.check(*run_command("pytest -x")), Approve)
    assert saved == ["saved"]
    assert settings.project_rules[str(here)] == [
        "allow run_command: make",
        "allow run_command: pytest",
    ]
    assert settings.rules == ["deny run_command: rm"]  # the unreadable line is dropped

    desk.change_folder(str(there))
    assert desk.policy.check(*run_command("make")) is None
    assert [r.text for r in worker.book.project] == ["allow write_file"]  # still shared
    assert desk.policy.project == str(there)


def test_applying_settings_keeps_this_conversations_rules(tmp_path: Path) -> None:
    desk = make_desk(tmp_path, Settings(), [])
    desk.policy.book.add(Rule.parse("allow run_command: ls", "conversation"))
    desk.apply_settings(Settings(rules=["allow write_file"]), "k")
    assert [r.text for r in desk.policy.book] == ["allow run_command: ls", "allow write_file"]


def test_tools_added_at_run_time_are_answered_by_rules_of_their_origin(tmp_path: Path) -> None:
    desk = make_desk(tmp_path, Settings(rules=["allow mcp:github/list_issues"]), [])
    desk.catalog.add(ToolDef("list_issues", "", {"type": "object"}, origin="mcp:github"))
    desk.catalog.add(ToolDef("list_bugs", "", {"type": "object"}, origin="mcp:gitlab"))
    assert isinstance(desk.policy.check(ToolCall("a", "list_issues", "{}"), {}), Approve)
    assert desk.policy.check(ToolCall("b", "list_bugs", "{}"), {}) is None


def test_the_sandbox_answers_only_when_it_is_on_and_works(tmp_path: Path) -> None:
    desk = make_desk(tmp_path, Settings(sandbox_commands=False), [])
    assert not desk.sandbox_on() and not desk.sandbox_answers()
    assert desk.policy.check(*run_command("make")) is None


def test_claude_code_rules_not_yet_imported_are_offered(tmp_path: Path) -> None:
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".claude" / "settings.json").write_text(
        json.dumps({"permissions": {"allow": ["Bash(make:*)", "Bash(git status)"]}})
    )
    settings = Settings(project_rules={str(tmp_path): ["allow run_command: make"]})
    desk = make_desk(tmp_path, settings, [])
    assert [r.text for r in desk.claude_rules_to_import()] == ["allow run_command: git status"]


def learn(policy: RulePolicy, asked: tuple[ToolCall, dict[str, Any]], decision: Decision) -> None:
    """A person's answer to the call as it was asked: the policy learns from its judgement."""
    call, arguments = asked
    policy.record(call, policy.judge_call(call, arguments), decision)
