"""A settings file written by a newer melgui: set aside once, never truncated, and the
notice reaches the person (`melgui exec` on stderr) even when a value is rejected."""

from __future__ import annotations

import json
from pathlib import Path

from melgui.core.config.settings import SCHEMA_VERSION, Settings, load_settings, settings_path
from tests.fakes import ScriptedOpenAI, done, text
from tests.fakes.exec import melgui_exec

NEWER = SCHEMA_VERSION + 1


def write_newer(file: Path, **values: object) -> str:
    content = json.dumps({"schema_version": NEWER, **values}, indent=1)
    file.parent.mkdir(parents=True, exist_ok=True)
    file.write_text(content)
    return content


def test_a_newer_file_read_at_every_start_is_set_aside_once(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    original = write_newer(file, theme="dark", future={"keep": True})
    notices: list[str] = []
    for _ in range(3):
        assert load_settings(file, notices=notices).theme == "dark"
    kept = tmp_path / f"settings.json.newer-format-{NEWER}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json", kept.name]
    assert kept.read_text() == original and file.read_text() == original
    assert len(notices) == 3 and len(set(notices)) == 1
    assert notices[0].endswith(
        f"kept unchanged in {kept}; this melgui uses the settings it understands."
    )


def test_a_newer_file_that_changed_since_is_set_aside_again(tmp_path: Path) -> None:
    file = tmp_path / "settings.json"
    first = write_newer(file, theme="dark")
    load_settings(file)
    second = write_newer(file, theme="light")
    load_settings(file)
    load_settings(file)
    base = f"settings.json.newer-format-{NEWER}"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["settings.json", base, f"{base}-2"]
    assert (tmp_path / base).read_text() == first
    assert (tmp_path / f"{base}-2").read_text() == second


def test_a_newer_file_with_a_value_this_melgui_rejects_starts_from_defaults_and_says_so(
    tmp_path: Path,
) -> None:
    file = tmp_path / "settings.json"
    original = write_newer(file, connection="quantum", theme="dark")
    notices: list[str] = []
    settings = load_settings(file, notices=notices)
    assert settings == Settings()
    kept = tmp_path / f"settings.json.newer-format-{NEWER}"
    assert kept.read_text() == original and file.read_text() == original
    (notice,) = notices
    assert notice.startswith(
        f"Settings {file} were written by a newer melgui (format {NEWER}; this one reads "
        f"up to {SCHEMA_VERSION}). They are kept unchanged in {kept}; this melgui cannot "
        "use them (connection: "
    )
    assert notice.endswith(") and starts from its defaults.")
    assert "fix or delete" not in notice


def test_melgui_exec_says_on_stderr_that_a_newer_file_was_set_aside(
    scripted_openai: ScriptedOpenAI,
) -> None:
    file = settings_path()  # this test's own config folder (tests/conftest.py)
    write_newer(file, connection="quantum")
    scripted_openai.script([text("hi"), done()])
    result = melgui_exec(
        "--transport", "openai", "--url", scripted_openai.base_url,
        "--folder", str(file.parent), "hello",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hi\n"
    kept = file.with_name(f"settings.json.newer-format-{NEWER}")
    (line,) = [line for line in result.stderr.splitlines() if "newer melgui" in line]
    assert line.startswith(f"melgui: Settings {file} were written by a newer melgui")
    assert f"kept unchanged in {kept}; this melgui cannot use them" in line
    assert line.endswith("and starts from its defaults.")
