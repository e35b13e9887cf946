"""A call's command is judged once: its card's question, the inspector, the "Always allow"
menu and the policy's record read the judgement the call keeps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from melgui.core.rules import command_check, policy
from melgui.core.rules.policy import RulePolicy
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import click_card, idle, relay_settings, type_prompt, wait_until


def test_a_compound_command_is_judged_once_with_its_card_and_the_inspector_open(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    counts = {"judge_call": 0, "judge": 0, "parse": 0}

    def counted(name: str, real: Any) -> Any:
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            counts[name] += 1
            return real(*args, **kwargs)

        return wrapper

    monkeypatch.setattr(RulePolicy, "judge_call", counted("judge_call", RulePolicy.judge_call))
    monkeypatch.setattr(RulePolicy, "judge", counted("judge", RulePolicy.judge))
    monkeypatch.setattr(policy, "parse_shell", counted("parse", policy.parse_shell))
    monkeypatch.setattr(command_check, "parse_shell", counted("parse", command_check.parse_shell))
    command = tool_call("run_command", {"command": "ls && rm -rf build > out.txt"}, id="r1")
    read = tool_call("read_file", {"path": "README.md"}, id="f1")
    scripted_relay.script([tool_calls(command, read)], [text("Done."), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Clean up")
        await wait_until(lambda: window.inspector.book.pending())
        window.show_call("r1")
        transcript = window.chat.transcript
        await wait_until(lambda: "Always\xa0allow" in transcript.card_html("r1"))
        assert window.side_panel.on_screen("inspector")
        await wait_until(lambda: "asked" in window.inspector.detail.arguments.toPlainText())
        assert "rm -rf build" in transcript.card_html("r1")
        for _ in range(3):  # the views drawn again read the same judgement
            window.chat.refresh_cards()
            window.inspector.detail.show_record(window.inspector.current_record())
        click_card(transcript, "r1", "always")
        menu = window.chat.answers.menu
        assert menu is not None and menu.isVisible()
        actions = menu.actions()
        assert actions[0].text() == "Allow commands “ls” and “rm” for this conversation"
        actions[0].trigger()
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert counts == {"judge_call": 2, "judge": 0, "parse": 1}  # two calls, one command
    rules = [r.text for r in window.policy.book.conversation]
    assert rules == ["allow run_command: ls", "allow run_command: rm"]
    result = scripted_relay.legs_received[1].messages
    assert {m.get("tool_call_id") for m in result if m["role"] == "tool"} == {"r1", "f1"}
