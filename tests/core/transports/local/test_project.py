"""What a small local model is told about the project, and the paths it may name."""

from __future__ import annotations

import re
from pathlib import Path

from melgui.core.protocol.catalog import ALL_TOOLS
from melgui.core.protocol.transport import LegRequest
from melgui.core.transports.local.plan import cued_tools
from melgui.core.transports.local.project import (
    CONFINED,
    CONFINED_PATH,
    files_note,
    folders_of,
    named_files,
    project_files,
    with_known_paths,
)


def test_files_are_listed_relative_and_sorted_without_hidden_or_build_folders(
    tmp_path: Path,
) -> None:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "src" / "pkg" / "mod.py").write_text("")
    (tmp_path / "README.md").write_text("")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "HEAD").write_text("")
    (tmp_path / ".env").write_text("SECRET=1")
    (tmp_path / "node_modules" / "x").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "index.js").write_text("")
    (tmp_path / "outside").symlink_to("/etc")
    assert project_files(str(tmp_path)) == ["README.md", "src/pkg/mod.py"]
    (tmp_path / ".gitignore").write_text("*.md\n")
    assert project_files(str(tmp_path)) == ["src/pkg/mod.py"]


def test_too_many_files_or_an_unreadable_folder_gives_none(tmp_path: Path) -> None:
    for n in range(12):
        (tmp_path / f"f{n}.txt").write_text("")
    assert project_files(str(tmp_path), limit=10) is None
    assert len(project_files(str(tmp_path), limit=10, truncate=True) or []) == 10
    assert project_files(str(tmp_path / "missing")) is None
    deep = tmp_path / "deep"
    for n in range(300):
        (deep / f"d{n}").mkdir(parents=True)
    assert project_files(str(deep), limit=10) is None  # empty folders end the walk too


def test_note_names_the_files_and_counts_the_rest() -> None:
    assert files_note(["a.py", "b.py"]).strip() == "Files in the project folder: a.py, b.py."
    many = [f"f{n}.py" for n in range(45)]
    assert files_note(many).endswith("f39.py and 5 more.")
    assert "(none yet)" in files_note([])


def test_read_paths_are_held_to_known_files() -> None:
    read = with_known_paths(ALL_TOOLS["read_file"], ["a.py", "b/c.txt"])
    assert read.parameters["properties"]["path"] == {"type": "string", "enum": ["a.py", "b/c.txt"]}
    assert read.parameters["required"] == ["path"]
    assert ALL_TOOLS["read_file"].parameters["properties"]["path"] == {"type": "string"}
    write = with_known_paths(ALL_TOOLS["write_file"], ["a.py"])
    assert write.parameters["properties"]["path"] == CONFINED  # new, but inside
    assert with_known_paths(ALL_TOOLS["edit_file"], None) is ALL_TOOLS["edit_file"]
    listing = with_known_paths(ALL_TOOLS["list_dir"], ["a.py", "b/c/d.txt"])
    assert listing.parameters["properties"]["path"]["enum"] == [".", "b", "b/c"]
    assert "required" not in listing.parameters


def test_folders_of() -> None:
    assert folders_of([]) == ["."]
    assert folders_of(["x/y/z.py", "x/w.py", "top.md"]) == [".", "x", "x/y"]


def test_beyond_the_bound_a_read_path_is_a_known_one_or_any_inside_the_project() -> None:
    read = with_known_paths(ALL_TOOLS["read_file"], ["a.py"], complete=False)
    assert read.parameters["properties"]["path"] == {
        "anyOf": [{"type": "string", "enum": ["a.py"]}, CONFINED]
    }


def test_a_confined_path_stays_inside_the_project() -> None:
    inside = ["a.py", "src/pkg/mod.py", ".gitignore", "docs/.hidden/x.md", "a..b"]
    outside = ["/etc/passwd", "../x", "a/../../x", "..", "a//b", "", "a/", "~/x"]
    assert all(re.match(CONFINED_PATH, path) for path in inside)
    assert not any(re.match(CONFINED_PATH, path) for path in outside)


def test_a_request_cues_the_tool_it_names_in_words_or_by_a_file() -> None:
    tools = tuple(ALL_TOOLS[name] for name in ("read_file", "list_dir", "grep", "find_files"))

    def cued(text: str) -> list[str]:
        request = LegRequest("local", [{"role": "user", "content": text}], tools, "assistant", ".")
        return cued_tools(request, tools, ["config.toml"])

    assert cued("Search the project for greet.") == ["grep"]
    assert cued("List the files in docs.") == ["list_dir"]
    assert cued("Which port does config.toml set?") == ["read_file"]
    assert cued("Hello there") == []


def test_the_file_a_request_names_is_the_longest_path_it_contains() -> None:
    files = ["faq.md", "docs/faq.md", "notes.txt"]
    assert named_files("What does docs/faq.md say?", files) == ["docs/faq.md"]
    assert named_files("Read NOTES.txt", files) == ["notes.txt"]
    assert named_files("What is the port?", files) == []
