"""Settings, "Better models": the list is filtered by memory, a download shows its
progress, can be cancelled and resumed, and fills the connection with the file; served
by a loopback hub (`HF_ENDPOINT`)."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from melgui.core.config.model_catalog import CATALOG, GB, CatalogModel
from melgui.core.config.settings import Settings
from melgui.core.transports.local.hub import model_path
from melgui.core.transports.local.model import default_model_path
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.main_window import MainWindow
from tests.fakes.hub import HubLike
from tests.fakes.window import wait_until

pytest.importorskip("huggingface_hub")

SHIPPED = default_model_path()
pytestmark = pytest.mark.skipif(SHIPPED is None, reason="needs the shipped GGUF to serve")
SERVED = CatalogModel(
    "SmolLM2 135M (from the loopback hub)",
    "melgui-test/SmolLM2-GGUF",
    "SmolLM2-135M-Instruct.Q4_1.gguf",
    "Apache-2.0",
    "https://www.apache.org/licenses/LICENSE-2.0",
    98_000_000,
    300_000_000,
    "the shipped model, served by a loopback hub",
)


@pytest.fixture
def hub(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[HubLike]:
    assert SHIPPED is not None
    with HubLike({SERVED.repo: {SERVED.filename: Path(SHIPPED)}}) as server:
        monkeypatch.setenv("HF_ENDPOINT", server.endpoint)
        monkeypatch.setenv("HF_HOME", str(tmp_path / "hf-home"))
        monkeypatch.delenv("HF_TOKEN", raising=False)
        yield server


def _dialog(make_window: Any, qtbot: QtBot) -> SettingsDialog:
    window: MainWindow = make_window(Settings())
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    qtbot.addWidget(dialog)
    dialog.tabs.setCurrentWidget(dialog.downloads)
    dialog.resize(760, 520)
    dialog.show()
    return dialog


def test_the_list_leaves_out_what_this_computer_cannot_run(make_window: Any, qtbot: QtBot) -> None:
    downloads = _dialog(make_window, qtbot).downloads
    downloads.show_catalog(CATALOG, 3 * GB)
    shown = [downloads.rows.item(i).text() for i in range(downloads.rows.count())]
    assert shown and all("needs" in row and "GB" in row for row in shown)
    assert len(shown) == sum(1 for m in CATALOG if m.ram_bytes <= 3 * GB) < len(CATALOG)
    assert "Left out" in downloads.memory_note.text()
    assert "Qwen2.5-Coder 7B" in downloads.memory_note.text()


def test_a_download_shows_progress_and_becomes_the_local_model(
    make_window: Any, run: Any, qtbot: QtBot, hub: HubLike
) -> None:
    dialog = _dialog(make_window, qtbot)
    downloads = dialog.downloads
    downloads.show_catalog((SERVED, *CATALOG[:3]), 8 * GB)
    hub.chunk_pause = 0.004  # about 6 s for the file: time to see it and to cancel
    downloads.download_button.click()
    run(wait_until(lambda: downloads.bar.value() > 0.4 * downloads.bar.maximum() > 0, 20))
    assert downloads.bar.isVisible() and "Downloading" in downloads.bar.format()
    assert downloads.cancel_button.isEnabled() and not downloads.download_button.isEnabled()
    if os.environ.get("MELGUI_SCREENSHOTS"):
        dialog.grab().save(os.path.join(os.environ["MELGUI_SCREENSHOTS"], "model-download.png"))

    downloads.cancel_button.click()
    run(wait_until(lambda: "cancelled" in downloads.status.text(), 20))
    assert not model_path(SERVED).exists() and downloads.download_button.isEnabled()

    hub.chunk_pause = 0.0
    hub.requests.clear()
    downloads.download_button.click()
    run(wait_until(lambda: "Downloaded to" in downloads.status.text(), 30))
    gets = [r for method, _p, r in hub.file_requests() if method == "GET"]
    assert len(gets) == 1 and gets[0].startswith("bytes=")  # resumed, not started over
    assert dialog.draft().connection == "local"
    assert dialog.draft().local_model_path == str(model_path(SERVED))
    assert "downloaded" in downloads.rows.item(0).text()


def test_a_gated_model_says_what_to_do(
    make_window: Any, run: Any, qtbot: QtBot, hub: HubLike
) -> None:
    downloads = _dialog(make_window, qtbot).downloads
    downloads.show_catalog((SERVED,), 8 * GB)
    hub.gated = True
    downloads.download_button.click()
    run(wait_until(lambda: "accept" in downloads.status.text(), 20))
    assert SERVED.page_url in downloads.status.text()
    assert not downloads.bar.isVisible()
