"""Smaller things a person saw in the real window: Settings showing every connection's
fields, "Current key: not set" under a typed key, a palette that scrolls sideways, see-
through `@` and `/` lists in the dark theme, history titles cut to "Please …", an export
header naming one model of several, Tab from Send landing in the inspector, and focus
rings too faint to find."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QModelIndex, Qt
from PySide6.QtGui import QColor, QImage
from PySide6.QtWidgets import QApplication, QPushButton, QStyleOptionViewItem, QWidget
from pytestqt.qtbot import QtBot

from melgui.core.store.export import export_markdown
from melgui.ui.runtime.theme import DARK, apply_theme
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from melgui.ui.window.palette import CommandPalette
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.window import relay_settings, settled, type_prompt, wait_until


def shot(widget: QWidget, name: str) -> None:
    """MELGUI_SHOTS_DIR=docs keeps the fixed state in the docs."""
    if os.environ.get("MELGUI_SHOTS_DIR"):
        widget.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / name))


@pytest.fixture
def dark(qapp: QApplication) -> Iterator[None]:
    """The app in the dark theme, as `melgui` starts it with theme = dark."""
    apply_theme(qapp, "dark")
    yield
    apply_theme(qapp, "light")


def test_the_connection_page_shows_only_the_chosen_connections_fields(
    make_window: Any, qtbot: QtBot, scripted_relay: ScriptedRelay
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    dialog.show()
    relay = (dialog.relay_url, dialog.stream_path)
    openai = (dialog.preset, dialog.base_url)
    local = (dialog.model_path,)

    def shown(widgets: tuple[QWidget, ...]) -> bool:
        return all(widget.isVisible() for widget in widgets)

    def hidden(widgets: tuple[QWidget, ...]) -> bool:
        return not any(widget.isVisible() for widget in widgets)

    assert shown(relay) and hidden(openai) and hidden(local)
    shot(dialog, "settings-connection-relay.png")
    dialog._kind_buttons["openai"].setChecked(True)
    assert shown(openai) and hidden(relay) and hidden(local)
    dialog._kind_buttons["local"].setChecked(True)
    assert shown(local) and hidden(relay) and hidden(openai)
    assert not dialog.api_key.isVisible()  # the local model needs no key
    assert not dialog.send_reasoning.isVisible()


def test_a_typed_key_is_not_called_not_set(
    make_window: Any, qtbot: QtBot, scripted_relay: ScriptedRelay
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    dialog.show()
    assert dialog.key_source.text() == "not set"
    qtbot.keyClicks(dialog.api_key, "sk-typed-here")
    assert "not set" not in dialog.key_source.text()
    assert "OK" in dialog.key_source.text()  # says when it is kept
    dialog.api_key.clear()
    assert dialog.key_source.text() == "not set"


def test_the_palette_shows_every_entry_whole_without_a_sideways_scrollbar(
    make_window: Any, qtbot: QtBot, scripted_relay: ScriptedRelay
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)
    window.actions_by_name["palette"].trigger()
    palette = window.findChild(CommandPalette)
    assert palette is not None and palette.isVisible()
    qtbot.wait(10)
    listing = palette.list
    assert not listing.horizontalScrollBar().isVisible()
    room = listing.viewport().width()
    metrics = listing.fontMetrics()
    cut = [
        listing.item(row).text()
        for row in range(listing.count())
        if metrics.horizontalAdvance(listing.item(row).text()) + 8 > room
    ]
    assert cut == []
    shot(palette, "palette-whole-entries.png")
    palette.reject()


def _distance(a: QColor, b: QColor) -> int:
    return abs(a.red() - b.red()) + abs(a.green() - b.green()) + abs(a.blue() - b.blue())


@pytest.mark.parametrize("typed", ["@", "/"])
def test_the_prompt_lists_are_opaque_in_the_dark_theme(
    dark: None, make_window: Any, qtbot: QtBot, scripted_relay: ScriptedRelay, typed: str
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay, theme="dark"))
    chat = window.chat
    chat.input.setFocus()
    qtbot.keyClicks(chat.input, typed)
    picker = chat.input.picker
    assert picker.isVisible() and picker.count() >= 1
    image = window.grab().toImage()
    top_left = picker.mapTo(window, picker.rect().topLeft())
    # a row that is not the highlighted one, or the list's bottom edge when it has one row
    row = picker.visualItemRect(picker.item(picker.count() - 1))
    y = top_left.y() + (row.center().y() if picker.count() > 1 else picker.height() - 3)
    x = top_left.x() + picker.width() - 12
    behind = chat.transcript.viewport()
    transcript_bg = behind.grab().toImage().pixelColor(behind.width() - 12, 6)
    assert _distance(image.pixelColor(x, y), transcript_bg) >= 24  # it stands apart
    edge = image.pixelColor(top_left.x(), top_left.y() + picker.height() // 2)
    assert _distance(edge, transcript_bg) >= 24  # and has a border
    if typed == "/":
        shot(window, "prompt-list-dark.png")


def test_history_titles_keep_their_words_in_a_narrow_sidebar(
    make_window: Any, qtbot: QtBot, scripted_relay: ScriptedRelay, run: Any
) -> None:
    scripted_relay.script([text("Sure."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)

    async def scenario() -> None:
        type_prompt(qtbot, window, "Please fix the failing test in parser.py and run it")
        await wait_until(lambda: not window.bridge.busy)
        await wait_until(lambda: len(window.history.ids()) == 1)

    run(scenario())
    sidebar = window.history
    window.history_dock.setMaximumWidth(160)  # as when panes take the room
    qtbot.waitUntil(lambda: sidebar.list.viewport().width() <= 160)
    index: QModelIndex = sidebar.model.index(0)
    option = QStyleOptionViewItem()
    option.initFrom(sidebar.list)
    option.rect = sidebar.list.visualRect(index)
    delegate = sidebar.list.itemDelegate()
    shown = delegate.title_for(option, index)  # type: ignore[attr-defined]
    assert shown.startswith("Please fix the")


def test_the_export_header_names_every_model_used(
    make_window: Any, qtbot: QtBot, scripted_relay: ScriptedRelay, run: Any
) -> None:
    scripted_relay.script([text("One."), done()], [text("Two."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay, model="first-model"))

    async def scenario() -> None:
        type_prompt(qtbot, window, "hello")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 1)
        window.set_model("second-model")
        type_prompt(qtbot, window, "again")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2)
        await wait_until(lambda: len(window.history.ids()) == 1)

    run(scenario())
    sent = [leg.json["model"] for leg in scripted_relay.legs_received]
    assert sent == ["first-model", "second-model"]
    header = export_markdown(window.history.store, window.history.ids()[0]).split("## ")[0]
    assert "first-model" in header and "second-model" in header


def test_tab_from_send_stays_in_the_chat_and_moves_nothing(
    make_window: Any, qtbot: QtBot, scripted_relay: ScriptedRelay, run: Any
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1024, 700)
    window.activateWindow()
    chat = window.chat
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    run(wait_until(lambda: window.width() == 1024))
    run(settled(window))
    places = [w.geometry() for w in (chat, window.history_dock, window.inspector)]
    chat.send_button.setFocus()
    qtbot.waitUntil(chat.send_button.hasFocus)
    qtbot.keyClick(chat.send_button, Qt.Key.Key_Tab)
    focused = QApplication.focusWidget()
    assert focused is chat.input  # Stop is disabled while nothing runs: back to the box
    qtbot.keyClick(chat.input, Qt.Key.Key_Backtab)
    assert QApplication.focusWidget() is chat.send_button
    assert [w.geometry() for w in (chat, window.history_dock, window.inspector)] == places


def _ring_pixels(image: QImage, accent: QColor) -> int:
    return sum(
        1
        for y in range(image.height())
        for x in range(image.width())
        if _distance(image.pixelColor(x, y), accent) < 60
    )


def test_a_focused_button_has_a_ring_in_the_accent_colour(
    dark: None, make_window: Any, qtbot: QtBot, scripted_relay: ScriptedRelay
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay, theme="dark"))
    window.activateWindow()
    button: QPushButton = window.chat.send_button
    accent = QColor(DARK.accent)
    qtbot.waitUntil(lambda: QApplication.activeWindow() is window)
    window.chat.input.setFocus()
    qtbot.waitUntil(window.chat.input.hasFocus)
    plain = _ring_pixels(button.grab().toImage(), accent)
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Tab)  # by keyboard, as a person moves
    assert button.hasFocus()
    ringed = _ring_pixels(button.grab().toImage(), accent)
    # at least a 2-pixel line all round the button
    assert ringed - plain >= 2 * 2 * (button.width() + button.height()) * 0.8
