"""Issue 15 item 2: the model follows the connection, in every request the servers get."""

from __future__ import annotations

from typing import Any

from PySide6.QtWidgets import QDialog
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedOpenAI, ScriptedRelay, done, text
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


def _dialog(window: MainWindow) -> SettingsDialog:
    window.open_settings()
    dialogs = [d for d in window.findChildren(SettingsDialog) if d.isVisible()]
    assert len(dialogs) == 1
    return dialogs[0]


def test_switching_connection_twice_sends_each_servers_own_model(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    scripted_openai: ScriptedOpenAI,
    make_window: Any,
    run: Any,
) -> None:
    scripted_relay.script([text("relay one"), done()], [text("relay two"), done()])
    scripted_openai.script([text("openai one"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay, model=""))

    async def scenario() -> None:
        await wait_until(lambda: window.choices.model == "mel-default")
        type_prompt(qtbot, window, "first")
        await wait_until(lambda: idle(window, 1))

        # To the OpenAI-compatible server: the dialog lists its models, we pick one.
        dialog = _dialog(window)
        dialog._kind_buttons["openai"].setChecked(True)
        dialog.base_url.setText(scripted_openai.base_url)
        dialog._update_enabled()
        assert dialog.model_box.currentText() == ""  # not the relay's model
        dialog.test_connection()
        await wait_until(lambda: dialog.model_box.count() == 2)
        dialog.model_box.setCurrentIndex(1)
        dialog.accept()
        assert dialog.result() == QDialog.DialogCode.Accepted
        await wait_until(lambda: "2 models" in window.toolbar.connection.toolTip())
        assert window.choices.model == "small-test"
        assert window.status.progress.text() == ""
        type_prompt(qtbot, window, "second")
        await wait_until(lambda: idle(window, 2))

        # Back to the relay without touching the model: its own model comes back.
        dialog = _dialog(window)
        dialog._kind_buttons["relay"].setChecked(True)
        dialog._update_enabled()
        assert dialog.model_box.currentText() == "mel-default"
        dialog.accept()
        await wait_until(lambda: window.choices.model == "mel-default")
        type_prompt(qtbot, window, "third")
        await wait_until(lambda: idle(window, 3))

    run(scenario())
    relay_models = [r.json["model"] for r in scripted_relay.legs_received]
    openai_models = [r.json["model"] for r in scripted_openai.legs_received]
    assert relay_models == ["mel-default", "mel-default"]
    assert openai_models == ["small-test"]
    assert window.settings.connection_models == {
        f"relay {scripted_relay.url.rstrip('/')}": "mel-default",
        f"openai {scripted_openai.base_url.rstrip('/')}": "small-test",
    }


def test_a_switch_in_code_never_carries_the_old_model(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    scripted_openai: ScriptedOpenAI,
    make_window: Any,
    run: Any,
) -> None:
    scripted_openai.script([text("ok"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay, model="mel-default"))
    switched = Settings(
        **{
            **window.settings.model_dump(),
            "connection": "openai",
            "openai_base_url": scripted_openai.base_url,
        }
    )
    assert switched.model == "mel-default"  # what a careless caller would pass on

    async def scenario() -> None:
        await wait_until(lambda: len(window.choices.models) == 2)
        window.apply_settings(switched, "k")
        assert window.session.loop.model != "mel-default"
        await wait_until(lambda: window.choices.model == "gpt-test")
        type_prompt(qtbot, window, "hello")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    assert [r.json["model"] for r in scripted_openai.legs_received] == ["gpt-test"]
    assert "Local model" not in window.status.progress.text()
