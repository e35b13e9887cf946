"""Settings → Signals: each toggle reaches the window's settings and the settings file."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings, load_settings, save_settings
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.settings.notifications_tab import TOGGLES


def test_the_signals_tab_turns_each_signal_off(make_window: Any, qtbot: QtBot) -> None:
    window = make_window(Settings())
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    tab = dialog.signals_tab
    assert [dialog.tabs.tabText(i) for i in range(dialog.tabs.count())][-1] == "Signals"
    assert all(box.isChecked() for box in tab.boxes.values())
    tab.boxes["signal_desktop"].setChecked(False)
    tab.boxes["signal_bell"].setChecked(False)
    draft = dialog.draft()
    assert (draft.signal_desktop, draft.signal_bell) == (False, False)
    assert (draft.signal_taskbar, draft.signal_badges, draft.signal_turn_end) == (True,) * 3
    window.apply_settings(draft, None)
    assert not window.settings.signal_desktop and not window.settings.signal_bell


def test_the_toggles_are_saved_and_an_older_file_gets_them_on(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    file.write_text(json.dumps({"schema_version": 2, "theme": "dark"}))
    older = load_settings(file)
    assert all(getattr(older, name) is True for name, _text in TOGGLES)
    save_settings(older.model_copy(update={"signal_badges": False}), file)
    again = load_settings(file)
    assert again.signal_badges is False and again.theme == "dark"
