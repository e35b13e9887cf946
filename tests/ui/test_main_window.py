"""The real main window against the scripted relay over loopback: what a person does."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtTest import QTest
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.protocol.catalog import ORCHESTRATION_TOOLS
from tests.fakes import ScriptedRelay, done, hold, http_error, text, tool_call, tool_calls
from tests.fakes.window import (
    click_card,
    idle,
    pick_on_chip,
    relay_settings,
    type_prompt,
    wait_until,
)


def test_a_typed_prompt_streams_the_answer_as_markdown(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    usage = {"prompt_tokens": 11, "completion_tokens": 5}
    scripted_relay.script(
        [text("Hello "), text("**there**.\n\n```python\nprint(1)\n```\n"), done(usage=usage)]
    )
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Say hi")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "Say hi" in shown
    assert "Hello there." in shown and "**" not in shown
    assert "print(1)" in shown
    assert scripted_relay.legs_received[0].last_user_text == "Say hi"
    assert scripted_relay.legs_received[0].authorization == "Bearer test-key"
    assert (
        "1 request " in window.status.counts.text()
        and "11 tokens in" in window.status.counts.text()
    )
    assert window.chat.input.toPlainText() == ""


def test_allowing_write_file_on_its_card_writes_the_file(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    call = tool_call("write_file", {"path": "src/hello.py", "content": "print('hi')\n"}, id="w1")
    scripted_relay.script([text("Writing it."), tool_calls(call)], [text("Written."), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Create hello.py")
        await wait_until(lambda: window.inspector.book.pending())
        record = window.inspector.current_record()
        assert record is not None and record.call.id == "w1"
        assert window.approvals.first() is record.request  # also in the window's queue
        await wait_until(lambda: "+print('hi')" in window.inspector.detail.arguments.toPlainText())
        assert not (project / "src" / "hello.py").exists()
        assert window.inspector.detail.waiting.isVisible()  # the state, not a second answer
        click_card(window.chat.transcript, "w1", "approve")  # its card's Allow
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert (project / "src" / "hello.py").read_text() == "print('hi')\n"
    result = scripted_relay.legs_received[1].messages[-1]
    assert result["role"] == "tool" and result["tool_call_id"] == "w1"
    assert window.inspector.book.get("w1").status == "ok"
    assert len(window.approvals) == 0 and not window.waiting_bar.isVisible()
    assert "Written." in window.chat.transcript.toPlainText()


def test_denying_run_command_by_keyboard_sends_the_reason_to_the_model(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    call = tool_call("run_command", {"command": "rm -rf build"}, id="r1")
    scripted_relay.script([tool_calls(call)], [text("OK, I will not."), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Clean up")
        await wait_until(lambda: window.inspector.book.pending())
        shown = window.inspector.detail.arguments.toPlainText()
        assert "rm -rf build" in shown and str(project) in shown  # command and folder
        click_card(window.chat.transcript, "r1", "reason")  # "Deny with a reason…"
        reason = window.chat.answers.reason
        qtbot.keyClicks(reason, "keep the build folder")
        QTest.keyClick(
            reason,
            Qt.Key.Key_Backspace,
            Qt.KeyboardModifier.ControlModifier | Qt.KeyboardModifier.ShiftModifier,
        )
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    result = scripted_relay.legs_received[1].messages[-1]
    assert result["tool_call_id"] == "r1"
    assert "denied" in result["content"] and "keep the build folder" in result["content"]
    assert window.inspector.book.get("r1").status == "denied"


def test_stop_ends_a_turn_mid_stream_and_the_conversation_goes_on(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    gate = threading.Event()
    scripted_relay.script(
        [text("Starting a long answer"), hold(gate), text(" never shown"), done()],
        [text("Second answer."), done()],
    )
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "Go")
        await wait_until(lambda: "Starting a long" in window.chat.transcript.toPlainText())
        assert window.chat.stop_button.isEnabled()
        QTest.keyClick(window.chat.input, Qt.Key.Key_Escape)
        await wait_until(lambda: not window.bridge.busy)
        gate.set()
        type_prompt(qtbot, window, "Again")
        await wait_until(
            lambda: idle(window, 1) and "Second answer." in window.chat.transcript.toPlainText()
        )

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "Stopped." in shown and "never shown" not in shown
    second = scripted_relay.legs_received[1].messages
    assert [m["role"] for m in second] == ["user", "assistant", "user"]
    assert second[1]["content"] == "Starting a long answer"


def test_messages_typed_during_a_turn_are_queued_and_sent_after_it(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    gate = threading.Event()
    scripted_relay.script(
        [text("First."), hold(gate), done()],
        [text("Second."), done()],
    )
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "one")
        await wait_until(lambda: "First." in window.chat.transcript.toPlainText())
        type_prompt(qtbot, window, "two")
        await wait_until(lambda: window.chat.queued_label.isVisible())
        assert "two" in window.chat.queued_label.text()
        gate.set()
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert [leg.last_user_text for leg in scripted_relay.legs_received] == ["one", "two"]
    assert not window.chat.queued_label.isVisible()


def test_switching_role_changes_the_tools_of_the_next_request(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("a"), done()], [text("b"), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "first")
        await wait_until(lambda: idle(window, 1))
        pick_on_chip(window.chat.composer.role_chip, "orchestrator")
        type_prompt(qtbot, window, "second")
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    first, second = scripted_relay.legs_received
    orchestration = {tool.name for tool in ORCHESTRATION_TOOLS}
    assert first.tool_role == "assistant" and not orchestration & set(first.tool_names)
    assert second.tool_role == "orchestrator" and orchestration <= set(second.tool_names)
    assert "remember" in second.tool_names


def test_a_401_shows_a_readable_error_in_the_chat(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([http_error(401, {"error": {"message": "invalid API key"}})])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        # The model list asked for at start must have answered first, or it could
        # overwrite the connection's state after the failure.
        await wait_until(lambda: window.toolbar.connection.toolTip().endswith(" models"))
        type_prompt(qtbot, window, "hi")
        await wait_until(
            lambda: not window.bridge.busy and "refused" in window.chat.transcript.toPlainText()
        )

    run(scenario())
    shown = window.chat.transcript.toPlainText()
    assert "The server refused the API key (HTTP 401)" in shown
    assert "invalid API key" in shown and "Settings → Connection" in shown
    assert "Traceback" not in shown
    tooltip = window.toolbar.connection.toolTip()
    assert tooltip == "HTTP 401 Unauthorized: invalid API key"


def test_a_server_that_is_down_says_what_to_do(qtbot: QtBot, make_window: Any, run: Any) -> None:
    settings = Settings(connection="relay", relay_url="http://127.0.0.1:9", model="m")
    window = make_window(settings)
    window.session.loop._retry = type(window.session.loop._retry)(attempts=1)

    async def scenario() -> None:
        type_prompt(qtbot, window, "hi")
        await wait_until(
            lambda: (
                not window.bridge.busy and "Cannot reach" in window.chat.transcript.toPlainText()
            )
        )

    run(scenario())
    assert "Settings → Connection" in window.chat.transcript.toPlainText()


def test_ctrl_return_approves_from_the_prompt_box(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    call = tool_call("write_file", {"path": "k.txt", "content": "by keyboard"}, id="k1")
    scripted_relay.script([tool_calls(call)], [text("ok"), done()])
    window = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "write k")
        await wait_until(lambda: window.inspector.book.pending())
        window.chat.input.setFocus()
        QTest.keyClick(window.chat.input, Qt.Key.Key_Return, Qt.KeyboardModifier.ControlModifier)
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert (project / "k.txt").read_text() == "by keyboard"
    assert window.chat.input.toPlainText() == ""
