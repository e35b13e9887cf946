"""A small model's search patterns are held to ones that can match in the project."""

from __future__ import annotations

from pathlib import Path

from melgui.core.protocol.catalog import ALL_TOOLS
from melgui.core.transports.local.gbnf import arguments_gbnf
from melgui.core.transports.local.patterns import with_known_patterns
from melgui.core.transports.local.plan import exact_schema


def _project(tmp_path: Path) -> list[str]:
    files = {
        "notes.txt": "Call Bob at 5pm.\n",
        "src/app.py": "def greet():\n    return 1\n",
        "deploy/k8s.yaml": "replicas: 7\n",
    }
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    return sorted(files)


def _pattern(tool_name: str, request: str, root: Path, files: list[str]) -> object:
    tool = with_known_patterns(ALL_TOOLS[tool_name], request, str(root), files)
    return tool.parameters["properties"]["pattern"]


def test_grep_may_search_only_for_request_words_the_project_holds(tmp_path: Path) -> None:
    files = _project(tmp_path)
    assert _pattern("grep", "Which file mentions Bob? Search for it.", tmp_path, files) == {
        "type": "string",
        "enum": ["Bob"],
    }
    both = _pattern("grep", "Search for greet or replicas", tmp_path, files)
    assert both == {"type": "string", "enum": ["greet", "replicas"]}


def test_grep_without_such_a_word_is_left_free(tmp_path: Path) -> None:
    files = _project(tmp_path)
    assert _pattern("grep", "Search for zebra", tmp_path, files) == {"type": "string"}


def test_find_files_offers_the_projects_extensions_or_the_one_named(tmp_path: Path) -> None:
    files = _project(tmp_path)
    named = _pattern("find_files", "Find the YAML files in this project.", tmp_path, files)
    assert named == {"type": "string", "enum": ["*.yaml"]}
    python = _pattern("find_files", "Find the Python files", tmp_path, files)
    assert python == {"type": "string", "enum": ["*.py"]}
    every = _pattern("find_files", "Find the config files", tmp_path, files)
    assert every == {"type": "string", "enum": ["*.py", "*.txt", "*.yaml"]}


def test_other_tools_are_unchanged_and_the_grammar_holds_the_enum(tmp_path: Path) -> None:
    files = _project(tmp_path)
    read = ALL_TOOLS["read_file"]
    assert with_known_patterns(read, "Search for Bob", str(tmp_path), files) is read
    grep = with_known_patterns(ALL_TOOLS["grep"], "mentions Bob", str(tmp_path), files)
    grammar = arguments_gbnf(exact_schema(grep.parameters))
    assert grammar is not None and '"\\"Bob\\""' in grammar
