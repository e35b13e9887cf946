"""The prompt box names the model that answers and where it runs; on the small built-in
model it links to Settings' model downloads."""

from __future__ import annotations

import os
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.transports.local.model import default_model_path
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow


def test_the_prompt_box_names_the_local_model_and_offers_a_better_one(
    make_window: Any, qtbot: QtBot
) -> None:
    window: MainWindow = make_window(Settings(connection="local"))
    line = window.chat.model_line
    assert line.isVisible()
    assert "SmolLM2-135M-Instruct" in line.text() and "on this computer" in line.text()
    assert "SmolLM2-135M-Instruct" in window.chat.input.placeholderText()
    if default_model_path() is not None:
        assert "Get a better model" in line.text()
    if os.environ.get("MELGUI_SCREENSHOTS"):
        window.resize(1100, 700)
        window.grab().save(os.path.join(os.environ["MELGUI_SCREENSHOTS"], "prompt-model.png"))

    line.linkActivated.emit("act:better-models/")
    dialog = window.findChild(SettingsDialog)
    assert dialog is not None and dialog.tabs.currentWidget() is dialog.downloads
    dialog.reject()


def test_choosing_another_model_renames_it(make_window: Any, qtbot: QtBot) -> None:
    settings = Settings(connection="openai", openai_base_url="http://127.0.0.1:9/v1")
    window: MainWindow = make_window(settings)
    window.set_model("qwen2.5-coder:7b")
    assert "qwen2.5-coder:7b" in window.chat.model_line.text()
    assert "on this computer" in window.chat.model_line.text()
    assert "better model" not in window.chat.model_line.text()
    assert "qwen2.5-coder:7b" in window.chat.input.placeholderText()
