"""The composer's model and role chips, in the real window against the scripted relay:
what they list, what picking sends, the typed model, /model and /role, the refresh, and
that they follow a new conversation (a new composer card)."""

from __future__ import annotations

from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QComboBox
from pytestqt.qtbot import QtBot

from melgui.ui.chat.composer.choices import ModelMenu
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.window import (
    idle,
    open_chip,
    pick_on_chip,
    relay_settings,
    type_prompt,
    wait_until,
)


def test_the_model_picked_on_the_chip_answers_the_next_request_and_is_remembered(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("a"), done()], [text("b"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay, model=""))
    chip = window.chat.composer.model_chip

    async def scenario() -> None:
        await wait_until(lambda: chip.text() == "mel-default")  # the server's first
        type_prompt(qtbot, window, "first")
        await wait_until(lambda: idle(window, 1))
        pick_on_chip(chip, "mel-chat  (no tools)")
        assert chip.text() == "mel-chat" and window.settings.model == "mel-chat"
        type_prompt(qtbot, window, "second")
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    assert [leg.json["model"] for leg in scripted_relay.legs_received] == [
        "mel-default",
        "mel-chat",
    ]
    key = f"relay {scripted_relay.url.rstrip('/')}"
    assert window.settings.connection_models[key] == "mel-chat"


def test_typing_in_the_model_menu_filters_it_and_enter_uses_an_unlisted_model(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("a"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    chip = window.chat.composer.model_chip
    run(wait_until(lambda: len(window.choices.models) == 2))

    menu = open_chip(chip)
    assert isinstance(menu, ModelMenu)
    field = menu.field
    run(wait_until(field.hasFocus))  # typing goes to the field at once
    qtbot.keyClicks(menu.field, "chat")
    shown = [a.text() for a in menu.model_actions if a.isVisible()]
    assert shown == ["mel-chat  (no tools)"] and menu.use_typed.isVisible()
    qtbot.keyClick(menu.field, Qt.Key.Key_Return)  # the one shown
    assert not menu.isVisible() and window.session.loop.model == "mel-chat"

    menu = open_chip(chip)
    assert isinstance(menu, ModelMenu)
    qtbot.keyClicks(menu.field, "my-own-model")
    assert not any(a.isVisible() for a in menu.model_actions)
    assert menu.use_typed.isVisible() and menu.use_typed.text() == "Use “my-own-model”"
    qtbot.keyClick(menu.field, Qt.Key.Key_Return)
    assert chip.text() == "my-own-model"
    run(wait_until(lambda: chip.shown_text() == "my-own-model"))  # the chip grew to fit it

    async def scenario() -> None:
        type_prompt(qtbot, window, "hi")
        await wait_until(lambda: idle(window, 1))

    run(scenario())
    assert scripted_relay.legs_received[0].json["model"] == "my-own-model"


def test_the_role_chip_changes_the_tools_and_follows_a_new_conversation(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("a"), done()], [text("b"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    run(wait_until(lambda: len(window.choices.models) == 2))
    first_card = window.chat.composer
    pick_on_chip(first_card.role_chip, "worker")
    assert first_card.role_chip.text() == "worker" and window.settings.role == "worker"

    window.new_conversation()  # a new chat, with a composer card of its own
    card = window.chat.composer
    assert card is not first_card
    assert card.role_chip.text() == "worker" and card.model_chip.text() == window.settings.model
    roles = open_chip(card.role_chip)
    checked = [a.text() for a in roles.actions() if a.isChecked()]
    assert checked == ["worker"] and "memory" in roles.actions()[1].toolTip()
    roles.close()

    async def scenario() -> None:
        type_prompt(qtbot, window, "one")
        await wait_until(lambda: idle(window, 1))
        pick_on_chip(card.role_chip, "orchestrator")
        type_prompt(qtbot, window, "two")
        await wait_until(lambda: idle(window, 2))

    run(scenario())
    first, second = scripted_relay.legs_received
    assert first.tool_role == "worker" and second.tool_role == "orchestrator"


def test_slash_model_opens_the_chip_menu_and_slash_role_sets_the_chip(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    card = window.chat.composer
    run(wait_until(lambda: len(window.choices.models) == 2))
    type_prompt(qtbot, window, "/model")
    menu = card.model_chip.menu()
    assert menu is not None
    run(wait_until(menu.isVisible))
    chip_top = card.model_chip.mapToGlobal(card.model_chip.rect().topLeft()).y()
    assert menu.geometry().bottom() <= chip_top  # above the chip, over the transcript
    menu.close()

    type_prompt(qtbot, window, "/role orchestrator")
    assert card.role_chip.text() == "orchestrator"
    assert window.session.loop.role == "orchestrator"
    type_prompt(qtbot, window, "/model mel-chat")
    assert card.model_chip.text() == "mel-chat" and window.session.loop.model == "mel-chat"


def test_refresh_in_the_model_menu_asks_the_server_again(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    run(wait_until(lambda: len(window.choices.models) == 2))
    asked = sum(r.path == "/v1/models" for r in scripted_relay.requests)
    scripted_relay.models = [{"id": "mel-new", "supported_parameters": ["tools"]}]
    pick_on_chip(window.chat.composer.model_chip, "Refresh the model list")
    run(wait_until(lambda: [m.id for m in window.choices.models] == ["mel-new"]))
    assert sum(r.path == "/v1/models" for r in scripted_relay.requests) == asked + 1
    menu = open_chip(window.chat.composer.model_chip)
    assert [a.text() for a in menu.actions() if a.data()] == ["mel-new"]
    menu.close()


def test_the_toolbar_no_longer_holds_model_or_role(
    scripted_relay: ScriptedRelay, make_window: Any
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    assert window.toolbar.findChildren(QComboBox) == []
    names = {
        w.accessibleName() for w in window.toolbar.findChildren(type(window.toolbar.plan_button))
    }
    assert "Model" not in names and "Role" not in names
