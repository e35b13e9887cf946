"""The run_command rule editor matches rules against past commands of every stored
conversation, not only the open one."""

from __future__ import annotations

import json
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.protocol.events import ToolCall
from melgui.ui.approvals.rules_editor import PolicyEditor
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


def test_the_rule_editor_sees_commands_of_stored_conversations(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    now = tool_call("run_command", {"command": "git status"}, id="n1")
    scripted_relay.script([tool_calls(now)], [text("done"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    store = window.history.store
    earlier = store.create_conversation("/elsewhere")
    for call_id, command in (("o1", "git log"), ("o2", "git status")):
        arguments = json.dumps({"command": command})
        store.calls.requested(earlier, ToolCall(call_id, "run_command", arguments))

    async def scenario() -> None:
        type_prompt(qtbot, window, "status?")
        await wait_until(lambda: window.inspector.book.pending())
        window.deny_key()
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    # This test's own history (tests/conftest.py): this conversation's first, each once.
    assert window.command_history() == ["git status", "git log"]
    window.open_settings()
    editor = window.findChild(PolicyEditor)
    assert editor is not None and list(editor.history) == ["git status", "git log"]
    editor.rule_input.setText("git log")
    editor._add_rule()
    editor.rules.selectRow(editor.rules.rowCount() - 1)
    assert "✓ git log" in editor.matches.toPlainText().splitlines()
    assert "✓ git status" not in editor.matches.toPlainText().splitlines()
