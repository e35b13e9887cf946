"""Issue 15 item 7: errors say which URL was tried and what to change."""

from __future__ import annotations

from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.connection_settings import complete_url
from melgui.core.config.settings import Settings
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedOpenAI, ScriptedRelay, http_error
from tests.fakes.window import relay_settings, type_prompt, wait_until

REJECTION = {
    "detail": [
        {"loc": ["body", "messages", 3, "tool_call_id"], "msg": "Field required"},
        {"loc": ["body", "messages", 4], "msg": "Input should be a valid dictionary"},
    ]
}


def test_a_base_url_without_v1_names_the_url_and_the_fix(
    qtbot: QtBot, scripted_openai: ScriptedOpenAI, make_window: Any, run: Any
) -> None:
    root = scripted_openai.base_url.removesuffix("/v1")
    settings = Settings(connection="openai", openai_base_url=root, model="gpt-test")
    window: MainWindow = make_window(settings)

    async def scenario() -> None:
        type_prompt(qtbot, window, "hi")
        await wait_until(lambda: "HTTP 404" in window.chat.transcript.toPlainText())

    run(scenario())
    shown = " ".join(window.chat.transcript.toPlainText().split())
    assert f"tried {root}/chat/completions" in shown
    assert f"the base URL probably lacks /v1 (try {root}/v1)" in shown
    assert "fix the base URL" in shown


def test_a_server_rejecting_the_history_is_not_retried_and_offers_a_way_out(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([http_error(500, REJECTION)])
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "hi")
        await wait_until(lambda: "rejected" in window.chat.transcript.toPlainText())
        await wait_until(lambda: not window.bridge.busy)

    run(scenario())
    assert len(scripted_relay.legs_received) == 1  # asked once, not three times
    shown = " ".join(window.chat.transcript.toPlainText().split())
    assert "The server rejected this conversation's history (HTTP 500)" in shown
    assert "Edit and resend the last message (Ctrl+Shift+Up)" in shown
    assert "Retrying" not in shown


def test_a_url_without_a_scheme_is_completed() -> None:
    assert complete_url("127.0.0.1:8080/v1") == (
        "http://127.0.0.1:8080/v1",
        "http:// added in front of '127.0.0.1:8080/v1'.",
    )
    assert complete_url("api.example.com/v1")[0] == "https://api.example.com/v1"
    assert complete_url("http://x/v1") == ("http://x/v1", "")


def test_settings_fills_in_the_scheme_when_accepted(
    make_window: Any, scripted_relay: ScriptedRelay
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    applied: list[Settings] = []
    window.open_settings()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None
    dialog.applied.connect(lambda settings, _key: applied.append(settings))
    dialog._kind_buttons["openai"].setChecked(True)
    dialog.base_url.setText("localhost:11434/v1")
    dialog.accept()
    assert applied and applied[0].openai_base_url == "http://localhost:11434/v1"
    assert "http:// added" in dialog.key_message
