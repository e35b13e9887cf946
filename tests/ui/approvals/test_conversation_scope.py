""" "Always allow … for this conversation", then Ctrl+N: the new conversation asks again."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import click_card, idle, relay_settings, type_prompt, wait_until


def test_a_conversation_rule_does_not_follow_into_a_new_conversation(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    first = tool_call("write_file", {"path": "a.txt", "content": "a\n"}, id="w1")
    second = tool_call("write_file", {"path": "b.txt", "content": "b\n"}, id="w2")
    scripted_relay.script(
        [tool_calls(first)], [text("Written."), done()], [tool_calls(second)], [text("ok"), done()]
    )
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Write a")
        await wait_until(lambda: window.inspector.book.pending())
        click_card(window.chat.transcript, "w1", "always")
        menu = window.chat.answers.menu
        assert menu is not None
        session = [a for a in menu.actions() if a.data() == "session"]
        assert session[0].text() == "Allow write_file calls for this conversation"
        session[0].trigger()
        await wait_until(lambda: idle(window, 2))
        QTest.keyClick(window, Qt.Key.Key_N, Qt.KeyboardModifier.ControlModifier)
        await wait_until(lambda: "Written." not in window.chat.transcript.toPlainText())
        type_prompt(qtbot, window, "Write b")
        await wait_until(lambda: "w2" in window.inspector.book.records)
        record = window.inspector.book.records["w2"]
        # asked again, not "auto:allow write_file (this conversation)"
        assert (record.status, record.decision) == ("waiting", "")
        click_card(window.chat.transcript, "w2", "approve")  # Allow
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert (project / "b.txt").read_text() == "b\n"
