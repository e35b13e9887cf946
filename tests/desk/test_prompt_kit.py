"""The prompt box's Qt-free parts: prompt history, slash commands, `@` files."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.protocol.views.fuzzy_match import fuzzy_rank
from melgui.core.protocol.views.prompt_source import HistoryCursor
from melgui.core.protocol.views.slash_commands import SlashCommand, SlashCommands
from melgui.desk.prompt.attachments import MAX_FILE_BYTES, FileIndex, attach
from melgui.desk.prompt.custom_commands import load_custom_commands, read_command_file
from melgui.desk.prompt.history import PromptHistory


def test_history_survives_a_restart_and_walks_both_ways(tmp_path: Path) -> None:
    history = PromptHistory("/some/project", tmp_path)
    for prompt in ("first", "second", "first"):
        history.add(prompt)
    again = PromptHistory("/some/project", tmp_path)
    assert again.prompts == ["second", "first"]  # a repeat moves to the end, once
    assert PromptHistory("/other/project", tmp_path).prompts == []
    cursor = HistoryCursor(again)
    assert cursor.older("draft") == "first"
    assert cursor.older("first") == "second"
    assert cursor.older("second") is None  # at the oldest
    assert cursor.newer() == "first"
    assert cursor.newer() == "draft"  # back to what was being typed
    assert cursor.newer() is None


def test_an_unreadable_history_file_starts_empty(tmp_path: Path) -> None:
    history = PromptHistory("/p", tmp_path)
    history.path.parent.mkdir(parents=True)
    history.path.write_text("{not json")
    assert PromptHistory("/p", tmp_path).prompts == []


def test_custom_commands_expand_arguments(tmp_path: Path) -> None:
    folder = tmp_path / "project" / ".melgui" / "commands"
    folder.mkdir(parents=True)
    (folder / "review.md").write_text(
        "---\ndescription: Review a file\n---\nReview $ARGUMENTS for bugs.\nThen $ARGUMENTS again."
    )
    (folder / "plain.md").write_text("# Summarize the project\nKeep it short.")
    (folder / "bad name!.md").write_text("x")
    (folder / "empty.md").write_text("\n\n")
    registry = SlashCommands()
    assert load_custom_commands(registry, str(tmp_path / "project")) == 2
    found = registry.parse("/review src/a.py")
    assert found is not None
    command, arguments = found
    assert command.summary == "Review a file" and command.origin == "project"
    assert command.run(arguments) == "Review src/a.py for bugs.\nThen src/a.py again."
    plain = registry.get("plain")
    assert plain is not None and plain.summary == "Summarize the project"
    assert plain.run("and tests") == "# Summarize the project\nKeep it short.\n\nand tests"
    assert registry.parse("/nope x") is None and registry.parse("/usr/bin/env") is None


def test_project_commands_win_over_user_ones_but_never_over_built_ins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MELGUI_CONFIG_DIR", str(tmp_path / "config"))
    user = tmp_path / "config" / "commands"
    project = tmp_path / "project" / ".melgui" / "commands"
    user.mkdir(parents=True)
    project.mkdir(parents=True)
    (user / "fix.md").write_text("user fix $ARGUMENTS")
    (user / "mine.md").write_text("description: Mine\nonly the user's")
    (project / "fix.md").write_text("project fix $ARGUMENTS")
    (project / "clear.md").write_text("shadowing a built-in")
    registry = SlashCommands()
    registry.add(SlashCommand("clear", "New conversation", lambda _: None))
    load_custom_commands(registry, str(tmp_path / "project"))
    fix, mine, clear = registry.get("fix"), registry.get("mine"), registry.get("clear")
    assert fix is not None and fix.run("x") == "project fix x"
    assert mine is not None and mine.summary == "Mine" and mine.origin == "user"
    assert clear is not None and clear.origin == "builtin"
    assert [c.name for c in registry.matching("f")] == ["fix"]
    assert "/mine [arguments] — Mine [user]" in registry.help_text()


def test_a_command_file_too_big_or_binary_is_skipped(tmp_path: Path) -> None:
    big = tmp_path / "big.md"
    big.write_text("x" * 70_000)
    binary = tmp_path / "bin.md"
    binary.write_bytes(b"\xff\xfe\x00")
    assert read_command_file(big, "user") is None
    assert read_command_file(binary, "user") is None


def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "build").mkdir()
    (root / ".gitignore").write_text("build/\n*.log\n")
    (root / "src" / "pkg" / "main_window.py").write_text("print('main')\n")
    (root / "src" / "pkg" / "window.py").write_text("w\n")
    (root / "README.md").write_text("readme\n")
    (root / "build" / "out.py").write_text("built\n")
    (root / "debug.log").write_text("log\n")
    (root / ".secret").write_text("hidden\n")
    return root


def test_the_index_respects_ignore_rules_and_lists_folders(tmp_path: Path) -> None:
    index = FileIndex(str(project(tmp_path)))
    expected = ["README.md", "src/pkg/main_window.py", "src/pkg/window.py", "src/", "src/pkg/"]
    assert index.paths() == expected


def test_fuzzy_ranking_prefers_names_and_runs() -> None:
    paths = ["src/pkg/main_window.py", "src/pkg/window.py", "docs/windows.md", "README.md"]
    assert fuzzy_rank("window.py", paths)[0] == "src/pkg/window.py"
    assert fuzzy_rank("mw", paths)[0] == "src/pkg/main_window.py"
    assert fuzzy_rank("zzz", paths) == []
    assert sorted(fuzzy_rank("", paths)) == sorted(paths)  # nothing typed: everything


def test_attaching_files_and_folders(tmp_path: Path) -> None:
    root = project(tmp_path)
    part = attach(str(root), "src/pkg/main_window.py")
    assert (part.text, part.note, part.kind) == ("print('main')\n", "", "file")
    listing = attach(str(root), "src/")
    assert listing.kind == "folder"
    assert listing.text.splitlines() == ["src/pkg/main_window.py", "src/pkg/window.py"]
    (root / "big.txt").write_text("é" * MAX_FILE_BYTES)
    big = attach(str(root), "big.txt")
    assert len(big.text.encode()) <= MAX_FILE_BYTES and "cut: the first 64 KB" in big.note
    (root / "blob.bin").write_bytes(b"\0\1\2")
    with pytest.raises(ValueError, match="binary"):
        attach(str(root), "blob.bin")
    with pytest.raises(ValueError, match="outside"):
        attach(str(root), "../elsewhere.txt")
    with pytest.raises(ValueError, match="cannot read"):
        attach(str(root), "missing.txt")


def test_the_index_refreshes_in_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import melgui.desk.prompt.attachments as attachments

    root = project(tmp_path)
    index = FileIndex(str(root))
    first = index.paths()
    assert "README.md" in first
    monkeypatch.setattr(attachments, "INDEX_TTL", 0.0)
    (root / "NEW.md").write_text("new\n")
    served = index.paths()  # the old listing answers while the new one is built
    assert served == first or "NEW.md" in served
    building = index._building
    assert building is not None
    building.join(10)
    assert "NEW.md" in index.paths()
