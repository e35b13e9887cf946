"""Closing the window while the model streams stops the session and closes the stream:
nothing keeps talking to the server for a window that is gone."""

from __future__ import annotations

from typing import Any

import pytest
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.scenario import pause
from tests.fakes.window import answer, relay_settings, type_prompt, wait_until


def test_closing_the_window_mid_answer_stops_the_session_and_the_stream(
    qtbot: QtBot,
    qapp: QApplication,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The app would quit with its last window, ending the loop the test runs in.
    monkeypatch.setattr(qapp, "quitOnLastWindowClosed", lambda: False)
    qapp.setQuitOnLastWindowClosed(False)
    scripted_relay.script([text("Half an answer"), pause(30), text(" never sent"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Tell me everything.")
        await wait_until(lambda: "Half an answer" in window.chat.transcript.toPlainText())
        assert window.session.busy
        assert window.close() is False  # it asks first: the answer is not finished
        shown = answer(window.guard.dialog, proceed=True)  # "Quit anyway"
        assert shown == "• main conversation: the agent is in the middle of a turn"
        await wait_until(lambda: not window.session.busy, timeout=5)
        await wait_until(lambda: scripted_relay.streams_open() == 0, timeout=5)

    run(scenario())
    assert not window.isVisible()
    assert len(scripted_relay.legs_received) == 1
    messages = window.session.conversation.messages
    assert [m.role for m in messages] == ["user", "assistant"]
    assert messages[0].content == "Tell me everything."
    assert messages[1].content == "Half an answer"
