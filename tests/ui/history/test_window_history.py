"""The real main window keeps its conversations: each one appears in the sidebar once its
first message is sent, and reopening one restores the chat and plans and goes on with
the whole history on the next leg."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.window import relay_settings, wait_until


def send(qtbot: QtBot, window: MainWindow, prompt: str) -> None:
    window.chat.input.setFocus()
    qtbot.keyClicks(window.chat.input, prompt)
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)


def test_conversations_are_kept_and_reopened(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    plan = tool_call("write_plan", {"title": "Steps", "markdown": "1. look\n2. fix"}, id="p1")
    scripted_relay.script(
        [text("Planning."), tool_calls(plan)],
        [text("Plan written."), done()],
        [text("Second chat answer."), done()],
        [text("Back in the first one."), done()],
    )
    window = make_window(relay_settings(scripted_relay))
    sidebar = window.history
    assert sidebar.ids() == []  # an untouched new conversation is not kept

    async def scenario() -> None:
        send(qtbot, window, "Make a plan")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2)
        await wait_until(lambda: len(sidebar.ids()) == 1)
        first = sidebar.ids()[0]
        assert sidebar.current_id == first
        sidebar.new_button.click()
        send(qtbot, window, "Another topic")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 1)
        await wait_until(lambda: len(sidebar.ids()) == 2)
        second = sidebar.ids()[0]
        assert sidebar.ids()[1] == first  # newest first
        assert window.plans_panel.plans == []  # a new conversation starts without plans
        sidebar.open(first)
        await wait_until(lambda: "Make a plan" in window.chat.transcript.toPlainText())
        assert window.plans_panel.plans == [("Steps", "1. look\n2. fix")]
        send(qtbot, window, "Go on")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 1)
        # The list is read again off the GUI thread after the turn: wait for that reading.
        await wait_until(lambda: sidebar.ids() == [first, second])

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "Plan written." in shown and "Back in the first one." in shown
    last = scripted_relay.legs_received[-1].messages
    assert [m["role"] for m in last] == ["user", "assistant", "tool", "assistant", "user"]
    assert last[2]["tool_call_id"] == "p1"
    first = sidebar.ids()[0]  # the reopened conversation is the newest again
    titles = [sidebar.model.index(r).data() for r in range(sidebar.model.rowCount())]
    assert titles == ["Make a plan", "Another topic"]
    stored = [s.message.content for s in sidebar.store.messages(first)]
    assert stored[-2:] == ["Go on", "Back in the first one."]
    assert [p.title for p in sidebar.store.plans(first)] == ["Steps"]
    wire = sidebar.store.wire.read(first)
    assert wire and all("test-key" not in w.text for w in wire)  # kept redacted


def test_leaving_a_conversation_mid_answer_keeps_what_arrived(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    gate = threading.Event()
    scripted_relay.script([text("Half an answer"), hold(gate)])
    window = make_window(relay_settings(scripted_relay))
    sidebar = window.history

    async def scenario() -> None:
        send(qtbot, window, "Tell me everything")
        await wait_until(lambda: "Half an answer" in window.chat.transcript.toPlainText())
        cid = sidebar.current_id
        assert cid is not None
        sidebar.new_button.click()  # the running turn is stopped, its text kept
        # The streamed text is on disk as a partial row first; the stopped turn's end
        # writes it whole.
        await wait_until(
            lambda: (
                [(s.message.content, s.partial) for s in sidebar.store.messages(cid)]
                == [("Tell me everything", False), ("Half an answer", False)]
            )
        )

    try:
        run(scenario())
    finally:
        gate.set()
