"""Switching light/dark in the settings recolours the whole window at once: palette-drawn
widgets through the application palette, HTML-drawn ones (the inspector's diff and
title, the toolbar's connection dot, tool cards) by being drawn again."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtGui import QPalette
from PySide6.QtWidgets import QApplication, QWidget
from pytestqt.qtbot import QtBot

from melgui.ui.runtime.theme import DARK, LIGHT, Colors, apply_theme
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import relay_settings, type_prompt, wait_until


@pytest.fixture
def light_app(qapp: QApplication) -> Iterator[QApplication]:
    apply_theme(qapp, "light")
    yield qapp
    apply_theme(qapp, "light")  # other tests expect the default palette


def switch(window: MainWindow, theme: str) -> None:
    window.apply_settings(window.settings.model_copy(update={"theme": theme}), window.api_key)
    QApplication.processEvents()  # the palette change reaches the widgets


def base_of(widget: QWidget) -> str:
    return widget.palette().color(QPalette.ColorRole.Base).name()


def window_of(widget: QWidget) -> str:
    return widget.palette().color(QPalette.ColorRole.Window).name()


def assert_drawn_in(window: MainWindow, colors: Colors) -> None:
    other = LIGHT if colors is DARK else DARK
    inspector = window.inspector
    assert window.colors is colors
    for widget in (inspector.calls, inspector.detail.arguments, inspector.wire_view.view):
        assert base_of(widget) == colors.base
    assert window_of(inspector.detail) == colors.window
    diff_html = inspector.detail.arguments.toHtml()
    assert colors.code_bg in diff_html and other.code_bg not in diff_html
    assert colors.ok in diff_html  # the added lines
    assert colors.pending in inspector.detail.title.text()  # "waiting for approval"
    toolbar = window.toolbar
    assert window_of(toolbar) == colors.window
    assert toolbar.palette().color(QPalette.ColorRole.WindowText).name() == colors.text
    assert colors.ok in toolbar.connection.text()  # the last known state, recoloured
    assert window_of(window.statusBar()) == colors.window
    assert colors.pending in window.waiting_bar.label.text()
    assert base_of(window.chat.transcript) == colors.base
    assert window.chat.composer.colors is colors  # the chips' and buttons' icons retinted
    assert base_of(window.history.list) == colors.base


def test_switching_theme_recolours_inspector_toolbar_and_the_rest(
    qtbot: QtBot,
    light_app: QApplication,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    tmp_path: Path,
) -> None:
    write = tool_call("write_file", {"path": "notes.txt", "content": "one\ntwo\n"}, id="w1")
    scripted_relay.script([text("Writing **notes**."), tool_calls(write)], [text("ok"), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))

    async def until_pending() -> None:
        await wait_until(lambda: window.toolbar.shown_connection[1] == "ok")
        type_prompt(qtbot, window, "write notes")
        await wait_until(lambda: window.inspector.book.pending())
        await wait_until(lambda: bool(window.inspector.detail.record.preview))  # type: ignore[union-attr]
        window.toolbar.set_connection("relay", "ok", "fine")

    run(until_pending())
    window.inspector.show_call("w1")
    assert_drawn_in(window, LIGHT)

    switch(window, "dark")
    assert_drawn_in(window, DARK)
    card = window.chat.transcript.toHtml()
    assert DARK.pending in card and LIGHT.pending not in card  # the card is still pending
    window.resize(1400, 860)
    shot = Path(os.environ.get("MELGUI_THEME_SHOT", tmp_path / "dark.png"))
    assert window.grab().save(str(shot))

    switch(window, "light")
    assert_drawn_in(window, LIGHT)
    assert window.approve_key()  # Allow, from the keys
    run(wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 2))


def test_worker_panes_follow_the_theme_too(
    light_app: QApplication, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    scripted_relay.script([text("Worker here."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    manager = window.pane_manager

    async def spawn() -> Any:
        pane = manager.pane(manager.spawn_agent("say hello", None).id)
        await wait_until(lambda: "Worker here." in pane.chat.transcript.toPlainText())
        return pane

    pane = run(spawn())
    switch(window, "dark")
    assert manager.colors is DARK
    assert pane.chat.colors is DARK and pane.inspector.detail.colors is DARK
    assert pane.chat.cards.colors is DARK
    switch(window, "light")
    assert pane.chat.colors is LIGHT
