"""Issue 15 item 6: errors, retries and stops survive reopening and exports; Retry and
Edit-and-resend work on the last message and keep the earlier attempt as a branch."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, hold, http_error, text
from tests.fakes.window import hover_message, relay_settings, type_prompt, wait_until


def test_errors_retries_and_stops_come_back_on_reopening_and_in_the_export(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_relay.script(
        [http_error(401, {"error": {"message": "bad key"}})],
        [http_error(500, {"error": {"message": "overloaded"}}, {"retry-after": "0"})],
        [text("fine"), done()],
        [text("partial "), hold(gate)],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    sidebar = window.history

    async def scenario() -> None:
        type_prompt(qtbot, window, "first")
        await wait_until(lambda: "HTTP 401" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)
        type_prompt(qtbot, window, "second")
        await wait_until(lambda: "fine" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)
        type_prompt(qtbot, window, "third")
        await wait_until(lambda: "partial" in window.chat.transcript.toPlainText())
        window.chat.stop()
        gate.set()
        await wait_until(lambda: not window.bridge.busy)
        cid = sidebar.current_id
        assert cid is not None
        window.new_conversation()
        await wait_until(lambda: sidebar.current_id is None)
        sidebar.open(cid)
        await wait_until(lambda: "third" in window.chat.transcript.toPlainText())

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "bad key" in shown
    assert "Retried: attempt 2 after: HTTP 500" in shown
    assert shown.index("Retried") < shown.index("fine")  # where it happened
    assert "Stopped." in shown and shown.index("third") < shown.index("Stopped.")
    cid = sidebar.current_id
    assert cid is not None
    target = tmp_path / "out.md"
    assert sidebar.export_to(cid, target, "markdown")
    exported = target.read_text()
    assert "> **Error** — HTTP 401" in exported
    assert "> **Retried** — attempt 2 after: HTTP 500" in exported
    assert "> **Stopped** — the answer before this point may be incomplete." in exported
    assert exported.index("## User\n\nthird") < exported.index("> **Stopped**")
    assert f"Exported to {target}" in window.status.currentMessage()


def test_retry_and_edit_the_last_message_on_a_new_branch(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script(
        [http_error(400, {"error": {"message": "no"}})],
        [text("yes"), done()],
        [text("edited answer"), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "hello")
        await wait_until(lambda: "HTTP 400" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)
        window.actions_by_name["retry"].trigger()
        await wait_until(lambda: "yes" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)
        window.actions_by_name["edit_resend"].trigger()
        assert window.chat.input.toPlainText() == "hello"
        assert window.session.conversation.messages == []  # the old list is a branch now
        window.chat.input.setPlainText("hello, edited")
        window.chat.input.send()
        await wait_until(lambda: "edited answer" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)

    run(scenario())
    legs = scripted_relay.legs_received
    assert [m["content"] for m in legs[1].messages if m["role"] == "user"] == ["hello"]
    assert [m["content"] for m in legs[2].messages if m["role"] == "user"] == ["hello, edited"]
    users = [m.content for m in window.session.conversation.messages if m.role == "user"]
    assert users == ["hello, edited"]
    cid = window.history.current_id
    assert cid is not None
    reasons = [branch.reason for branch in window.history.store.branches(cid)]
    assert reasons == ["retry", "edit"]


def test_the_last_answers_ask_again_button_sends_its_question_again(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("first try"), done()], [text("second try"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "hello")
        await wait_until(lambda: "first try" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)
        bar = hover_message(window.chat.transcript, "first try")
        assert bar.buttons["retry"].isVisibleTo(bar)
        qtbot.mouseClick(bar.buttons["retry"], Qt.MouseButton.LeftButton)
        await wait_until(lambda: "second try" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)

    run(scenario())
    legs = scripted_relay.legs_received
    assert [m["content"] for m in legs[1].messages if m["role"] == "user"] == ["hello"]
    reasons = [b.reason for b in window.history.store.branches(window.history.current_id or "")]
    assert reasons == ["retry"]  # the first attempt is kept as a branch
