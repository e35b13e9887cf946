"""The window asks once whether to trust a folder, shows it restricted with what is off,
and trusting and undoing are one click each (the bar, File, Settings → Workers)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from PySide6.QtCore import QPoint, Qt
from PySide6.QtWidgets import QApplication
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.config.trust import FolderTrust
from melgui.ui.runtime.theme import apply_theme
from melgui.ui.window.main_window import MainWindow
from melgui.ui.window.trust_bar import TEXT_BESIDE_MIN
from tests.fakes.window import settled, wait_until

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_first_open_asks_then_restricted_then_trusted_and_back(
    qtbot: QtBot, make_window: Callable[..., MainWindow], project: Path
) -> None:
    window = make_window(Settings(connection="openai", openai_base_url="http://127.0.0.1:9/v1"))
    window.resize(1100, 700)
    bar = window.trust_bar
    assert bar.isVisible() and "Do you trust the files" in bar.text.text()
    assert "project MCP servers" in bar.text.text()
    if os.environ.get("MELGUI_SCREENSHOTS"):
        window.grab().save(str(DOCS / "trust-prompt.png"))
    qtbot.mouseClick(bar.restrict_button, Qt.MouseButton.LeftButton)
    assert bar.isVisible() and "Restricted folder" in bar.text.text()
    assert not bar.restrict_button.isVisible() and FolderTrust().asked(project)
    assert not FolderTrust().is_trusted(project)
    if os.environ.get("MELGUI_SCREENSHOTS"):
        window.grab().save(str(DOCS / "trust-restricted.png"))
    qtbot.mouseClick(bar.trust_button, Qt.MouseButton.LeftButton)  # one click
    assert FolderTrust().is_trusted(project) and not bar.isVisible()
    window.actions_by_name["folder_trust"].trigger()  # one click back
    assert not FolderTrust().is_trusted(project) and bar.isVisible()
    assert "Restricted folder" in bar.text.text()


def test_settings_workers_tab_trusts_through_the_bar(
    make_window: Callable[..., MainWindow], project: Path
) -> None:
    from melgui.ui.settings.dialog import SettingsDialog
    from melgui.ui.settings.flow import open_settings_dialog

    window = make_window(Settings(connection="openai", openai_base_url="http://127.0.0.1:9/v1"))
    open_settings_dialog(window, [])
    [dialog] = window.findChildren(SettingsDialog)
    box = dialog.workers_tab.trust
    assert not box.isChecked()
    box.setChecked(True)
    assert FolderTrust().is_trusted(project) and not window.trust_bar.isVisible()
    box.setChecked(False)
    assert not FolderTrust().is_trusted(project) and window.trust_bar.isVisible()
    dialog.reject()


def test_a_narrow_bar_puts_its_buttons_under_the_text(
    make_window: Callable[..., MainWindow], run: Any, qapp: QApplication
) -> None:
    """At the window's 720 px the buttons beside the text left it 165 px: 14 lines, and
    the bar took 234 of 600 px from the chat. Under the text, it has the bar's width; the
    welcome fits what is left."""
    apply_theme(qapp, "light")  # as the app does before its window: wider minimums
    window = make_window(Settings(connection="openai", openai_base_url="http://127.0.0.1:9/v1"))
    bar = window.trust_bar
    for width, stacked in ((720, True), (1100, False)):
        window.resize(width, 600)
        run(wait_until(lambda: window.width() == width))  # noqa: B023
        run(settled(window))
        text = bar.text.geometry()
        button_top = bar.trust_button.mapTo(bar, QPoint(0, 0)).y()
        assert text.width() >= TEXT_BESIDE_MIN
        assert (button_top >= text.bottom()) is stacked
        assert bar.text.heightForWidth(text.width()) <= text.height()  # no line cut
    # At 720 x 600 the chat under the bar is about 215 px: the welcome gives up its room
    # above the title, its keys line and its note, and its suggestions are in sight and
    # elided, not cut (they were below the viewport's bottom, and cut at its right).
    window.resize(720, 600)
    run(wait_until(lambda: window.width() == 720))
    run(settled(window))
    welcome, viewport = window.chat.welcome, window.chat.transcript.viewport()
    first = welcome.buttons[0]
    assert first.mapTo(viewport, QPoint(0, first.height())).y() <= viewport.height()
    for button in welcome.buttons:
        words = button.fontMetrics().horizontalAdvance(button.text())
        assert words + button.iconSize().width() < button.width()
        assert button.toolTip().startswith(button.text().rstrip("…"))
