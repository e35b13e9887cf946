"""Settings: defaults, environment overrides, atomic JSON round trip, clear errors."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import (
    PRESETS,
    SCHEMA_VERSION,
    Settings,
    SettingsError,
    config_dir,
    data_dir,
    load_settings,
    preset_for_url,
    save_settings,
    settings_path,
)
from melgui.core.protocol.catalog import DEFAULT_MODES


def test_defaults_are_local_with_the_product_approval_modes(tmp_path: Path) -> None:
    settings = load_settings(tmp_path / "missing.json")
    assert settings.connection == "local"
    assert settings.approval_modes == DEFAULT_MODES
    assert settings.schema_version == SCHEMA_VERSION
    assert settings.openai_base_url == "https://api.meliai.ai/v1"


def test_config_and_data_dirs_follow_the_environment() -> None:
    assert config_dir() == Path(os.environ["MELGUI_CONFIG_DIR"])
    assert data_dir() == Path(os.environ["MELGUI_DATA_DIR"])
    assert settings_path().parent == config_dir()


def test_round_trip_is_atomic_and_leaves_no_temp_files(tmp_path: Path) -> None:
    path = tmp_path / "nested" / "settings.json"
    settings = Settings(connection="relay", relay_url="http://127.0.0.1:9", model="m1")
    settings.rules.append("allow run_command: git status")
    settings.project_rules["/p"] = ["deny run_command: rm"]
    settings.approval_modes["write_file"] = "auto"
    save_settings(settings, path)
    assert [p.name for p in path.parent.iterdir()] == ["settings.json"]
    again = load_settings(path)
    assert again == settings
    assert json.loads(path.read_text())["schema_version"] == SCHEMA_VERSION


def test_a_file_missing_new_tools_gets_their_defaults(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(json.dumps({"approval_modes": {"write_file": "auto"}}))
    modes = load_settings(path).approval_modes
    assert modes["write_file"] == "auto"
    assert modes["run_command"] == "ask"


def test_environment_overrides_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "settings.json"
    save_settings(Settings(connection="local", openai_base_url="http://file/v1"), path)
    monkeypatch.setenv("MELGUI_CONNECTION", "openai")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://env:1234/v1")
    settings = load_settings(path)
    assert settings.connection == "openai"
    assert settings.openai_base_url == "http://env:1234/v1"


def test_the_environment_gives_lists_and_dicts_as_json_merged_over_the_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "settings.json"
    save_settings(Settings(project_rules={"/a": ["allow write_file"]}, model="file"), path)
    monkeypatch.setenv("melgui_rules", '["deny run_command: rm"]')  # any case
    monkeypatch.setenv("MELGUI_PROJECT_RULES", '{"/b": ["allow grep"]}')
    monkeypatch.setenv("MELGUI_SANDBOX_COMMANDS", "true")
    monkeypatch.setenv("MELGUI_MODEL", "null")  # a string field takes it as it is
    monkeypatch.setenv("MELGUI_OPENAI_BASE_URL", "http://melgui-env/v1")
    settings = load_settings(path)
    assert settings.rules == ["deny run_command: rm"]
    assert settings.project_rules == {"/a": ["allow write_file"], "/b": ["allow grep"]}
    assert settings.sandbox_commands is True and settings.model == "null"
    assert settings.openai_base_url == "http://melgui-env/v1"
    monkeypatch.setenv("MELGUI_RULES", "null")  # JSON's null: as if not set
    assert load_settings(path).rules == []


def test_a_variable_that_is_not_the_json_its_setting_takes_is_one_clear_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MELGUI_RULES", "allow write_file")
    with pytest.raises(SettingsError) as caught:
        load_settings(tmp_path / "missing.json")
    assert str(caught.value) == (
        "Invalid settings: MELGUI_RULES is not valid JSON (the setting rules takes a JSON "
        "list, object or model)"
    )
    monkeypatch.setenv("MELGUI_RULES", '{"not": "a list"}')
    with pytest.raises(SettingsError, match="rules: Input should be a valid list"):
        load_settings(tmp_path / "missing.json")


@pytest.mark.parametrize(
    ("content", "words"),
    [
        ("{not json", "not valid JSON"),
        ("[1, 2]", "does not hold a JSON object"),
        ('{"connection": "carrier pigeon"}', "connection"),
        ('{"command_timeout": -3}', "command_timeout"),
    ],
)
def test_bad_files_give_one_clear_line(tmp_path: Path, content: str, words: str) -> None:
    path = tmp_path / "settings.json"
    path.write_text(content)
    with pytest.raises(SettingsError) as caught:
        load_settings(path)
    message = str(caught.value)
    assert words in message and "\n" not in message


def test_presets_cover_the_known_servers() -> None:
    urls = {preset.base_url for preset in PRESETS.values()}
    assert {
        "https://api.meliai.ai/v1",
        "http://127.0.0.1:11434/v1",
        "http://127.0.0.1:1234/v1",
        "http://127.0.0.1:8080/v1",
    } <= urls
    assert preset_for_url("http://127.0.0.1:11434/v1/") == PRESETS["ollama"]
    assert preset_for_url("http://elsewhere/v1") is None


def test_a_newer_settings_file_is_set_aside_never_truncated(tmp_path: Path) -> None:
    from melgui.core.config.settings import SCHEMA_VERSION, load_settings, save_settings

    file = tmp_path / "settings.json"
    newer = {
        "schema_version": SCHEMA_VERSION + 1,
        "theme": "dark",
        "an_option_of_the_future": {"keep": True},
    }
    original = json.dumps(newer, indent=1)
    file.write_text(original)
    notices: list[str] = []
    settings = load_settings(file, notices=notices)
    assert settings.theme == "dark" and settings.schema_version == SCHEMA_VERSION
    kept = tmp_path / f"settings.json.newer-format-{SCHEMA_VERSION + 1}"
    assert kept.read_text() == original
    assert notices == [
        f"Settings {file} were written by a newer melgui (format {SCHEMA_VERSION + 1}; this "
        f"one reads up to {SCHEMA_VERSION}). They are kept unchanged in {kept}; this melgui "
        "uses the settings it understands."
    ]
    save_settings(settings, file)  # this melgui's own save replaces only its file
    assert kept.read_text() == original
    load_settings(file, notices=notices)  # now current: nothing more is set aside
    assert len(notices) == 1 and len(list(tmp_path.iterdir())) == 2


def test_an_older_file_is_migrated_step_by_step() -> None:
    from melgui.core.config.settings import SettingsError, migrate_settings

    def one_to_two(data: dict[str, Any]) -> dict[str, Any]:
        data["theme"] = "dark" if data.pop("dark_mode") else "light"
        return data

    def two_to_three(data: dict[str, Any]) -> dict[str, Any]:
        data["model"] = data.pop("default_model", "")
        return data

    steps = {1: one_to_two, 2: two_to_three}
    old = {"schema_version": 1, "dark_mode": True, "default_model": "m1"}
    assert migrate_settings(old, migrations=steps, current=3) == {
        "schema_version": 3,
        "theme": "dark",
        "model": "m1",
    }
    assert migrate_settings({"theme": "light"}, migrations=steps, current=1) == {"theme": "light"}
    with pytest.raises(SettingsError, match="positive integer"):
        migrate_settings({"schema_version": "2"}, migrations=steps, current=3)


def test_saved_tools_and_prefixes_of_an_older_file_become_rules(tmp_path: Path) -> None:
    path = tmp_path / "settings.json"
    path.write_text(
        json.dumps({"saved_tools": ["write_file"], "saved_command_prefixes": ["git status"]})
    )
    settings = load_settings(path)
    assert settings.rules == ["allow write_file", "allow run_command: git status"]
    assert "saved_tools" not in settings.to_file_json()
