"""The window asks once whether to trust a folder, shows it restricted with what is off,
and trusting and undoing are one click each (the bar, File, Settings → Workers)."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.config.trust import FolderTrust
from melgui.ui.window.main_window import MainWindow

DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_first_open_asks_then_restricted_then_trusted_and_back(
    qtbot: QtBot, make_window: Callable[..., MainWindow], project: Path
) -> None:
    window = make_window(Settings(connection="openai", base_url="http://127.0.0.1:9/v1"))
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

    window = make_window(Settings(connection="openai", base_url="http://127.0.0.1:9/v1"))
    open_settings_dialog(window, [])
    [dialog] = window.findChildren(SettingsDialog)
    box = dialog.workers_tab.trust
    assert not box.isChecked()
    box.setChecked(True)
    assert FolderTrust().is_trusted(project) and not window.trust_bar.isVisible()
    box.setChecked(False)
    assert not FolderTrust().is_trusted(project) and window.trust_bar.isVisible()
    dialog.reject()
