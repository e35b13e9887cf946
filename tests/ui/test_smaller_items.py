"""Issue 15 items 8 and 9: room for the deny reason and the tool table, a status bar that
says the model is writing, long code lines that wrap, controls with names."""

from __future__ import annotations

import threading
from typing import Any

from PySide6.QtWidgets import QTabWidget
from pytestqt.qtbot import QtBot

from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.window import click_card, relay_settings, settled, type_prompt, wait_until


def test_the_deny_reason_has_room_on_the_card(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script(
        [tool_calls(tool_call("write_file", {"path": "a.txt", "content": "x"}))],
        [text("ok"), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)

    async def scenario() -> None:
        type_prompt(qtbot, window, "write")
        await wait_until(lambda: window.waiting_bar.isVisible())
        call_id = window.chat.answers.waiting_ids()[0]
        click_card(window.chat.transcript, call_id, "reason")
        await wait_until(lambda: window.chat.answers.reason.width() >= 300)
        click_card(window.chat.transcript, call_id, "deny")
        await wait_until(lambda: not window.bridge.busy)

    run(scenario())


def test_settings_shows_eight_tools_at_once(make_window: Any, scripted_relay: Any) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.open_settings()
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None
    table = dialog.policy_editor.table
    for tabs in dialog.findChildren(QTabWidget):  # Settings → Approval → Tools
        for index in range(tabs.count()):
            page = tabs.widget(index)
            if page is not None and (page is table or page.isAncestorOf(table)):
                tabs.setCurrentIndex(index)
    assert table.isVisible()
    shown = table.viewport().height() // table.verticalHeader().defaultSectionSize()
    assert shown >= 8
    dialog.reject()


def test_the_status_bar_says_the_model_is_writing(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    gate = threading.Event()
    scripted_relay.script([text("Some words "), hold(gate), text("more."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "talk")
        await wait_until(lambda: "Some words" in window.chat.transcript.toPlainText())
        assert window.status.activity.text() == "The model is writing — request 1"
        gate.set()
        await wait_until(lambda: not window.bridge.busy)

    run(scenario())
    assert window.status.activity.text() == "Ready"


def test_a_long_code_line_wraps_instead_of_scrolling_the_transcript(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    line = "x = " + " + ".join(f"value_{i}" for i in range(120))
    scripted_relay.script([text(f"Here:\n\n```python\n{line}\n```\n"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def scenario() -> None:
        type_prompt(qtbot, window, "code")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 1)

    run(scenario())
    assert "value_119" in window.chat.transcript.toPlainText()
    assert window.chat.transcript.horizontalScrollBar().maximum() == 0


def test_toolbar_controls_have_names(make_window: Any, scripted_relay: Any) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    bar = window.toolbar
    assert bar.folder_button.accessibleName() == "Project folder"
    assert bar.folder_button.text() == f"{window.kit.folder.rsplit('/', 1)[-1]} ▾"
    assert bar.settings_button.accessibleName() == "Settings"
    assert bar.settings_button.toolTip() == "Settings (Ctrl+,)"
    composer = window.chat.composer
    assert composer.model_chip.accessibleName() == "Model"
    assert composer.role_chip.accessibleName() == "Role"
    assert composer.role_chip.accessibleDescription() == "assistant"


def test_the_system_theme_follows_the_desktop(monkeypatch: Any) -> None:
    from melgui.ui.runtime import theme

    monkeypatch.setattr(theme, "system_is_dark", lambda: True)  # no desktop under test
    assert theme.colors_for("system") is theme.DARK
    monkeypatch.setattr(theme, "system_is_dark", lambda: False)
    assert theme.colors_for("system") is theme.LIGHT


def test_zoom_makes_terminal_text_bigger_and_resets(
    make_window: Any, scripted_relay: Any, run: Any
) -> None:
    from melgui.ui.panes.terminal.pane import TerminalPane

    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.actions_by_name["new_terminal"].trigger()
    pane = window.pane_manager.pane(1)
    assert isinstance(pane, TerminalPane)
    run(settled(window))
    size, rows = pane.view.font().pointSize(), pane.emulator.rows
    chat_size = window.chat.transcript.font().pointSizeF()
    window.actions_by_name["zoom_in"].trigger()
    window.actions_by_name["zoom_in"].trigger()
    run(settled(window))
    assert pane.view.font().pointSize() == size + 2
    assert pane.emulator.rows < rows  # bigger cells, fewer rows in the same pane
    assert window.chat.transcript.font().pointSizeF() == chat_size + 2
    window.actions_by_name["zoom_reset"].trigger()
    run(settled(window))
    assert pane.view.font().pointSize() == size and pane.emulator.rows == rows
