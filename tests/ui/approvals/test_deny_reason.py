"""A deny reason typed in any visible reason box reaches the model, whichever shortcut or
key sends it: the pending call keeps one answer, not one per box."""

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
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until

DENY = Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier


@pytest.mark.parametrize("box", ["bar", "inspector"])
@pytest.mark.parametrize("key", ["shortcut", "enter"])
def test_the_reason_typed_in_each_box_reaches_the_model(
    box: str,
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
        window.show_call("e1")  # the inspector has the waiting call selected
        record = window.inspector.current_record()
        assert record is not None and record.call.id == "e1"
        reason: QLineEdit = (
            window.approval_bar.controls.reason
            if box == "bar"
            else window.inspector.detail.controls.reason
        )
        assert reason.isVisible()
        reason.setFocus()
        qtbot.keyClicks(reason, f"not now, from the {box}")
        shoot = box == "bar" and key == "shortcut"  # MELGUI_SHOTS_DIR=docs: the docs' shots
        if shoot:
            window.grab().save(str(shots / "deny-reason-typed.png"))
        if key == "shortcut":
            QTest.keyClick(reason, Qt.Key.Key_Backspace, DENY)
        else:
            QTest.keyClick(reason, Qt.Key.Key_Return)
        await wait_until(lambda: idle(window, 2))
        if shoot:
            window.show_call("e1")
            window.grab().save(str(shots / "deny-reason-sent.png"))

    run(scenario())
    result = scripted_relay.legs_received[1].messages[-1]
    assert result["tool_call_id"] == "e1"
    assert f"Reason: not now, from the {box}." in result["content"]
