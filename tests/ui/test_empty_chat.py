"""The empty chat: its note wraps inside the transcript (nothing cut off), says the
built-in model is small and where to connect a larger one, and goes with the first text."""

from __future__ import annotations

import os
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.ui.window.main_window import MainWindow


def test_the_empty_chat_note_wraps_and_points_at_the_settings(
    make_window: Any, qtbot: QtBot
) -> None:
    window: MainWindow = make_window(Settings())
    window.resize(900, 600)
    window.show()
    qtbot.waitExposed(window)
    note = window.chat.empty_note
    viewport = window.chat.transcript.viewport()
    assert note.isVisible()
    assert "built-in local model is small" in note.text() and "Settings → Connection" in note.text()
    # Wrapped: several lines, all inside the viewport.
    assert note.geometry().right() <= viewport.width()
    assert note.height() >= 3 * note.fontMetrics().lineSpacing()
    assert note.height() >= note.heightForWidth(note.width())
    if os.environ.get("MELGUI_SCREENSHOTS"):
        window.grab().save(os.environ["MELGUI_SCREENSHOTS"])
    window.chat.transcript.append("hello")
    assert not note.isVisible()
    window.chat.transcript.clear()
    assert note.isVisible()
