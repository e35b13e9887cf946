"""The empty chat's note in the real window speaks of the built-in local model only when
that is the connection in use."""

from __future__ import annotations

from typing import Any

from tests.fakes import ScriptedRelay
from tests.fakes.window import relay_settings


def test_another_server_connected_means_no_word_of_the_small_local_model(
    scripted_relay: ScriptedRelay, make_window: Any
) -> None:
    window = make_window(relay_settings(scripted_relay))
    note = window.chat.empty_note
    assert note.isVisible() and "Ask about this project" in note.text()
    assert "built-in local model" not in note.text()

    note.set_local(True)  # what the window does when the local model is chosen
    assert "built-in local model is small" in note.text()
