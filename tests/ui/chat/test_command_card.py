"""A command's card in the real window: one line, "Ran <command>" with a non-zero exit as
a failure with its code; the run time and the wait for approval told apart; unfolded in
place, the output in a dark monospace block; in the inspector, the output in monospace."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl
from PySide6.QtGui import QFontInfo
from pytestqt.qtbot import QtBot

from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import click_card, idle, relay_settings, type_prompt, wait_until


def test_a_failing_command_shows_its_exit_code_not_done(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    command = "echo '==== 1 failed, 2 passed ===='; exit 3"
    call = tool_call("run_command", {"command": command}, id="r1")
    scripted_relay.script([tool_calls(call)], [text("The tests fail."), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Run the tests")
        await wait_until(lambda: window.inspector.book.pending())
        click_card(window.chat.transcript, "r1", "approve")
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    card = next(line for line in shown.splitlines() if "Ran " in line)
    assert command in card and "exit 3" in card and "done" not in card
    assert "approval" in card  # the wait is told apart from the run time
    output = "==== 1 failed, 2 passed ===="
    assert output not in shown.splitlines()  # folded: one line
    window.chat.transcript.anchorClicked.emit(QUrl("card:r1"))
    assert output in window.chat.transcript.toPlainText().splitlines()  # unfolded in place
    assert f"background-color:{window.colors.output_bg}" in window.chat.transcript.toHtml()
    window.chat.transcript.anchorClicked.emit(QUrl("card:r1"))
    assert output not in window.chat.transcript.toPlainText().splitlines()
    assert "exit_code=3" in scripted_relay.legs_received[1].messages[-1]["content"]
    window.inspector.show_call("r1")
    result = window.inspector.detail.result
    assert "1 failed" in result.toPlainText()
    assert QFontInfo(result.font()).fixedPitch()
    assert "✗ exit 3" in window.inspector.detail.title.text()
    window.resize(1100, 700)
    window.grab().save(str(_shots(project.parent) / "failed-command-card.png"))


def _shots(tmp_path: Path) -> Path:
    """MELGUI_SHOTS_DIR=docs renders the screenshot kept in docs/."""
    return Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
