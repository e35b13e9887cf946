"""The habits CI holds us to: ruff, mypy, core/tools free of Qt (import-linter), and
modules of at most 600 lines."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def run(*command: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)


def test_ruff_is_clean() -> None:
    result = run(sys.executable, "-m", "ruff", "check", "melgui", "tests", "bench")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_is_clean() -> None:
    result = run(sys.executable, "-m", "mypy")
    assert result.returncode == 0, result.stdout + result.stderr


def test_core_and_tools_import_no_qt() -> None:
    lint_imports = shutil.which("lint-imports")
    if lint_imports is None:
        pytest.fail("lint-imports (import-linter) is not installed: pip install -e '.[test]'")
    result = run(lint_imports)
    assert result.returncode == 0, result.stdout + result.stderr


MODULE_LINES = 600  # a module past this is doing more than one thing: split it by concern


def test_no_module_is_over_the_size_limit() -> None:
    sizes = {
        str(path.relative_to(ROOT)): len(path.read_text(encoding="utf-8").splitlines())
        for path in (ROOT / "melgui").rglob("*.py")
    }
    assert sizes  # the walk found the package
    over = {name: lines for name, lines in sizes.items() if lines > MODULE_LINES}
    assert over == {}, f"modules over {MODULE_LINES} lines: {over}"


FOLDER_ENTRIES = 16  # a folder past this holds more than one concern: group it
VAGUE_NAMES = {"misc", "utils", "util", "common", "helpers"}


def test_no_folder_holds_more_than_sixteen_entries() -> None:
    folders = [ROOT / "melgui", *(p for p in (ROOT / "melgui").rglob("*") if p.is_dir())]
    sizes = {
        str(folder.relative_to(ROOT)): len(
            [entry for entry in folder.iterdir() if entry.name != "__pycache__"]
        )
        for folder in folders
        if folder.name != "__pycache__"
    }
    assert sizes["melgui/ui"] > 1  # the walk found the package
    over = {name: count for name, count in sizes.items() if count > FOLDER_ENTRIES}
    assert over == {}, f"folders over {FOLDER_ENTRIES} entries: {over}"


def test_no_module_or_folder_has_a_vague_name() -> None:
    vague = [
        str(path.relative_to(ROOT))
        for path in (ROOT / "melgui").rglob("*")
        if path.stem in VAGUE_NAMES
    ]
    assert vague == []


# A view gets what it shows through its constructor or a typed interface (a Protocol the
# main window meets), never by probing an untyped window for what it might have.
WINDOW_PROBES = (
    re.compile(r"\b(window|host|resumed)\w*\s*:\s*Any\b"),
    re.compile(r"getattr\(\s*(self\.)?_?(window|host)\b"),
    re.compile(r"getattr\(\s*self\s*,\s*\"(chat|inspector|history|desk|pane_manager|bridge)\""),
)


def test_no_view_probes_an_untyped_window() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "melgui" / "ui").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if any(probe.search(line) for probe in WINDOW_PROBES)
    ]
    assert found == [], "window probes:\n" + "\n".join(found)


# The window composes its parts: each is made with what it needs and connected by the
# window; no part puts itself into the window.
INSTALLS = re.compile(r"^\s*def install_\w*\(")


def test_no_part_installs_itself_into_the_window() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{number}: {line.strip()}"
        for path in sorted((ROOT / "melgui" / "ui").rglob("*.py"))
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if INSTALLS.search(line)
    ]
    assert found == [], "parts that install themselves:\n" + "\n".join(found)
    assert INSTALLS.search("def install_mcp(window: McpHost) -> ServersPanel:")


def test_the_window_probe_check_can_fail() -> None:
    for line in ("def install(window: Any) -> None:", 'x = getattr(window, "desk", None)',
                 "def open_conversation(self, resumed: Any) -> None:",
                 'old = getattr(self, "chat", None)'):  # fmt: skip
        assert any(probe.search(line) for probe in WINDOW_PROBES), line
