"""A waiting call is answered on its card, the one place a person answers it: the card
shows what will run and Allow, Deny, "Always allow ▾" with the keys; it comes into view
with the keyboard on Allow; the inspector shows the state only; the "waiting" line
counts the questions of every pane and brings the next card forward, a worker pane's too.

MELGUI_SHOTS_DIR=DIR also saves the window with a pending approval, light and dark."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtGui import QTextCursor
from PySide6.QtTest import QTest
from PySide6.QtWidgets import QPushButton
from pytestqt.qtbot import QtBot

from melgui.ui.approvals.waiting_bar import WaitingBar
from melgui.ui.chat.blocks.approval_card import action_href
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import click_card, idle, relay_settings, type_prompt, wait_until

SHOTS = os.environ.get("MELGUI_SHOTS_DIR", "")


def in_view(transcript: Any, call_id: str, verb: str) -> bool:
    cursor = transcript.link_cursor(call_id, action_href(verb, call_id))
    return cursor is not None and transcript.viewport().rect().contains(
        transcript.cursorRect(cursor).center()
    )


def link_on(transcript: Any) -> str:
    """The link the keyboard is on."""
    cursor = QTextCursor(transcript.textCursor())
    cursor.setPosition(cursor.selectionStart() + 1)
    return str(cursor.charFormat().anchorHref())


def test_the_card_asks_scrolls_into_view_takes_the_keyboard_and_enter_allows(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    words = " ".join(["A long answer before the call, to scroll."] * 12)
    long_answer = "\n\n".join([words] * 8)
    call = tool_call("run_command", {"command": "ls && rm -rf build"}, id="r1")
    scripted_relay.script([text(long_answer), tool_calls(call)], [text("Done."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1100, 700)
    transcript = window.chat.transcript

    async def scenario() -> None:
        type_prompt(qtbot, window, "Clean up")
        await wait_until(lambda: window.chat.answers.focused() == "r1")
        card = transcript.card_html("r1").replace("\xa0", " ")  # kept on one line
        for shown in ("Allow", "Deny", "Always allow ▾", "Deny with a reason…", "rm -rf build"):
            assert shown in card, shown
        assert "Ctrl+Return" in card and "Ctrl+Shift+Backspace" in card  # the keys
        assert "◆ asked" in card  # the command's parts as the rules read them
        assert transcript.hasFocus() and in_view(transcript, "r1", "approve")
        # The inspector says it waits; the waiting line says where: no second set of buttons.
        window.show_call("r1")
        assert window.inspector.detail.waiting.isVisible()
        names = [b.text() for b in window.inspector.findChildren(QPushButton)]
        names += [b.text() for b in window.waiting_bar.findChildren(QPushButton)]
        assert not {"Allow", "Approve", "Deny"} & {n.split(" (")[0] for n in names}
        assert window.waiting_bar.isVisible() and "answer it on its card" in (
            window.waiting_bar.label.text()
        )
        if SHOTS:
            window.chat.answers.reveal("r1")
            for theme in ("light", "dark"):
                window.settings.theme = theme
                window.set_theme(window.settings)
                await wait_until(lambda: "Always allow" in transcript.card_html("r1"))
                window.chat.answers.reveal("r1")
                window.grab().save(os.path.join(SHOTS, f"approval-card-{theme}.png"))
            window.settings.theme = "light"
            window.set_theme(window.settings)
        window.side_panel.dock.hide()
        window.chat.answers.reveal("r1")  # the waiting line's "Go to it"
        assert window.chat.answers.focused() == "r1"
        assert link_on(transcript) == action_href("approve", "r1")
        QTest.keyClick(transcript, Qt.Key.Key_Tab)  # Tab: the next answer
        assert link_on(transcript) == action_href("deny", "r1")
        QTest.keyClick(transcript, Qt.Key.Key_Backtab)
        assert link_on(transcript) == action_href("approve", "r1")
        QTest.keyClick(transcript, Qt.Key.Key_Return)  # Enter on the focused Allow
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert window.inspector.book.get("r1").decision == "approved"
    assert not window.waiting_bar.isVisible()
    assert "Always allow" not in transcript.card_html("r1")  # answered: the question goes


def test_a_person_typing_keeps_the_keyboard_and_the_keys_answer_the_oldest_question(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    call = tool_call("write_file", {"path": "a.txt", "content": "a\n"}, id="w1")
    scripted_relay.script([tool_calls(call)], [text("Written."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Write a")
        window.chat.input.setFocus()
        qtbot.keyClicks(window.chat.input, "and then")
        await wait_until(lambda: window.chat.answers.waiting_ids() == ["w1"])
        assert window.chat.input.hasFocus()  # not taken from the person typing
        QTest.keyClick(
            window.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier
        )  # the window's Allow key
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert (project / "a.txt").read_text() == "a\n"
    assert window.chat.input.toPlainText() == "and then"


def test_a_worker_panes_question_is_answered_on_its_own_card(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    call = tool_call("write_file", {"path": "w.txt", "content": "from worker"}, id="wk1")
    scripted_relay.on(lambda r: r.tool_role == "worker", [tool_calls(call)], times=1)
    scripted_relay.on(lambda r: r.tool_role == "worker", [text("done"), done()], times=1)
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1400, 800)
    manager = window.pane_manager

    async def scenario() -> AgentPane:
        info = manager.spawn_agent("write w.txt", None, "tab")
        pane = manager.pane(info.id)
        assert isinstance(pane, AgentPane)
        await wait_until(lambda: len(window.approvals) == 1)
        assert pane.findChildren(WaitingBar) == []  # no bar of its own: its card asks
        assert "Allow" in pane.chat.transcript.card_html("wk1")
        assert f"from {pane.session.source}" in window.waiting_bar.label.text()
        window.chat.input.setFocus()  # the person is in the main chat
        pane.chat.answers.arrived("wk1")  # as a question arriving: the keyboard stays there
        assert window.chat.input.hasFocus() and pane.chat.answers.focused() is None
        window.waiting_bar.show_button.click()  # "Go to it": asked for, so it goes there
        await wait_until(lambda: pane.chat.answers.focused() == "wk1")
        assert manager.area.focused_id == info.id
        if SHOTS:
            window.grab().save(os.path.join(SHOTS, "approval-card-worker.png"))
        click_card(pane.chat.transcript, "wk1", "deny")  # its own card's Deny
        await wait_until(lambda: not pane.bridge.busy and pane.state.name == "idle")
        return pane

    pane = run(scenario())
    assert not (project / "w.txt").exists()
    assert pane.chat.transcript.card_html("wk1").count("Allow") == 0
    assert not window.waiting_bar.isVisible()
