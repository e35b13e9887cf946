"""Settings, "On this computer": a running Ollama-style server and a model file found on
disk are listed, and one click fills the connection with either."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.transports.discovery import find_model_files, find_servers
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from tests.fakes.ollama import OllamaLike, write_ollama_store

MODEL = b"GGUF" + b"\x03\x00\x00\x00" + b"\0" * 56


def test_one_click_uses_a_found_server_or_file(
    make_window: Any, run: Any, qtbot: QtBot, tmp_path: Path
) -> None:
    window: MainWindow = make_window(Settings())
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    blobs = write_ollama_store(tmp_path / "ollama", {"qwen2.5:0.5b": MODEL})
    with OllamaLike(["llama3.2:1b", "qwen2.5:0.5b"]) as ollama:
        servers = run(find_servers([("Ollama", ollama.port)]))
    files = find_model_files({"Ollama": [tmp_path / "ollama"]})
    found = dialog.found_models
    found.show_found(servers, files)
    rows = [found.rows.item(i).text() for i in range(found.rows.count())]
    assert len(rows) == 3 and "3 found" in found.status.text()
    assert rows[0].startswith("llama3.2:1b") and "Ollama server" in rows[0]
    assert rows[2].startswith("qwen2.5:0.5b") and "Ollama file" in rows[2]

    dialog.tabs.setCurrentWidget(found)
    dialog.resize(720, 420)
    dialog.show()
    if os.environ.get("MELGUI_SCREENSHOTS"):
        dialog.grab().save(os.environ["MELGUI_SCREENSHOTS"])

    found.rows.itemClicked.emit(found.rows.item(0))
    draft = dialog.draft()
    assert (draft.connection, draft.openai_base_url, draft.model) == (
        "openai",
        f"http://127.0.0.1:{ollama.port}/v1",
        "llama3.2:1b",
    )
    assert dialog.tabs.currentIndex() == 0  # back on the connection, to see and press OK

    found.rows.itemClicked.emit(found.rows.item(2))
    draft = dialog.draft()
    assert (draft.connection, draft.local_model_path) == (
        "local",
        str(blobs["qwen2.5:0.5b"].resolve()),
    )


def test_nothing_found_says_where_it_looked(make_window: Any, qtbot: QtBot) -> None:
    window: MainWindow = make_window(Settings())
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    dialog.found_models.show_found([], [])
    assert dialog.found_models.rows.count() == 0
    assert "None found" in dialog.found_models.status.text()
