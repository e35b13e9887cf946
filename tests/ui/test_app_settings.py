"""What the app says at start about its settings file: the notice of a newer file set
aside reaches the window's warning; a broken file of this format asks to fix it."""

from __future__ import annotations

import json

from melgui.core.config.settings import SCHEMA_VERSION, Settings, settings_path
from melgui.ui.app import _settings_or_defaults


def test_a_newer_file_with_a_rejected_value_is_set_aside_with_its_notice() -> None:
    file = settings_path()  # this test's own config folder (tests/conftest.py)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"schema_version": SCHEMA_VERSION + 1, "connection": "quantum"}))
    settings, problem = _settings_or_defaults()
    assert settings == Settings()
    assert problem is not None
    kept = file.with_name(f"settings.json.newer-format-{SCHEMA_VERSION + 1}")
    assert problem.startswith(f"Settings {file} were written by a newer melgui")
    assert f"kept unchanged in {kept}; this melgui cannot use them (connection: " in problem
    assert problem.endswith("and starts from its defaults.")
    assert "fix or delete" not in problem


def test_a_broken_file_of_this_format_asks_to_be_fixed_and_defaults_are_used() -> None:
    file = settings_path()
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "connection": "quantum"}))
    settings, problem = _settings_or_defaults()
    assert settings == Settings()
    assert problem is not None
    assert problem.startswith(f"Invalid settings in {file}: connection: ")
    assert problem.endswith(" — using defaults; fix or delete the file.")
    assert list(file.parent.iterdir()) == [file]  # nothing set aside: it is this format


def test_current_settings_have_nothing_to_say() -> None:
    file = settings_path()
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(json.dumps({"schema_version": SCHEMA_VERSION, "theme": "dark"}))
    settings, problem = _settings_or_defaults()
    assert (settings.theme, problem) == ("dark", None)
