"""A deny reason typed on the waiting call's card ("Deny with a reason…") reaches the
model, whichever key sends it (Enter in the line, the deny shortcut, the card's Deny):
the pending call keeps one answer, its draft, which the card shows."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QLineEdit
from pytestqt.qtbot import QtBot

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import click_card, idle, relay_settings, type_prompt, wait_until

DENY = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


@pytest.mark.parametrize("key", ["shortcut", "enter", "deny"])
def test_the_reason_typed_on_the_card_reaches_the_model(
    key: str,
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    project: Path,
) -> None:
    call = tool_call("edit_file", {"path": "README.md", "old": "a", "new": "b"}, id="e1")
    scripted_relay.script([tool_calls(call)], [text("OK."), done()])
    window = make_window(relay_settings(scripted_relay))
    window.resize(1200, 760)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or project.parent)

    async def scenario() -> None:
        type_prompt(qtbot, window, "Edit it")
        await wait_until(lambda: window.inspector.book.pending())
        transcript = window.chat.transcript
        click_card(transcript, "e1", "reason")
        reason: QLineEdit = window.chat.answers.reason
        assert reason.isVisible() and reason.hasFocus()
        assert reason.width() >= 300  # room for a sentence
        qtbot.keyClicks(reason, f"not now, from the {key}")
        await wait_until(lambda: f"not now, from the {key}" in transcript.card_html("e1"))
        shoot = key == "shortcut"  # MELGUI_SHOTS_DIR=docs: the docs' shots
        if shoot:
            window.grab().save(str(shots / "deny-reason-typed.png"))
        if key == "shortcut":
            QTest.keyClick(reason, Qt.Key.Key_Backspace, DENY)
        elif key == "enter":
            QTest.keyClick(reason, Qt.Key.Key_Return)
        else:  # the line closed, the reason kept: the card's Deny sends it
            QTest.keyClick(reason, Qt.Key.Key_Escape)
            assert not reason.isVisible()
            click_card(transcript, "e1", "deny")
        await wait_until(lambda: idle(window, 2))
        if shoot:
            window.show_call("e1")
            window.grab().save(str(shots / "deny-reason-sent.png"))

    run(scenario())
    result = scripted_relay.legs_received[1].messages[-1]
    assert result["tool_call_id"] == "e1"
    assert f"Reason: not now, from the {key}." in result["content"]


def test_the_reason_line_closes_when_the_call_stops_waiting(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    call = tool_call("write_file", {"path": "a.txt", "content": "a\n"}, id="w1")
    scripted_relay.script([tool_calls(call)], [text("OK."), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Write it")
        await wait_until(lambda: window.chat.answers.waiting_ids() == ["w1"])
        click_card(window.chat.transcript, "w1", "reason")
        reason = window.chat.answers.reason
        assert reason.isVisible()
        window.chat.stop()  # the turn stopped while the person was typing a reason
        await wait_until(lambda: not window.bridge.busy)
        await wait_until(lambda: not reason.isVisible())

    run(scenario())
    assert not (project / "a.txt").exists()
