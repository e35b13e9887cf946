"""File and folder dialogs are the platform's own: melgui asks through QFileDialog's
static functions (getOpenFileName, getSaveFileName, getExistingDirectory), which open
the native dialog where the platform has one, and never builds Qt's own widget dialog
or turns the native one off. Scanned with Python's parser, so comments never count."""

from __future__ import annotations

import ast
from pathlib import Path

import melgui.ui

UI = Path(melgui.ui.__file__).parent
STATIC = {"getOpenFileName", "getOpenFileNames", "getSaveFileName", "getExistingDirectory"}
FORBIDDEN_NAMES = {"DontUseNativeDialog", "DontUseNativeDialogs", "AA_DontUseNativeDialogs"}


def problems_in(path: Path, root: Path = UI.parent.parent) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
    found = []
    for node in ast.walk(tree):
        where = f"{path.relative_to(root)}:{getattr(node, 'lineno', 0)}"
        if isinstance(node, ast.Call):
            function = node.func
            if isinstance(function, ast.Name) and function.id == "QFileDialog":
                found.append(f"{where}: a QFileDialog built by hand (use its static functions)")
            if (
                isinstance(function, ast.Attribute)
                and isinstance(function.value, ast.Name)
                and function.value.id == "QFileDialog"
                and function.attr not in STATIC
                and function.attr[0].islower()
            ):
                found.append(f"{where}: QFileDialog.{function.attr}")
        if isinstance(node, ast.Attribute) and node.attr in FORBIDDEN_NAMES:
            found.append(f"{where}: {node.attr} turns the native dialogs off")
    return found


def test_file_dialogs_are_the_platforms_own() -> None:
    files = sorted(UI.rglob("*.py"))
    assert len(files) > 100
    problems = [problem for path in files for problem in problems_in(path)]
    assert problems == []
    used = sum("QFileDialog.get" in path.read_text(encoding="utf-8") for path in files)
    assert used >= 5  # the attach, export, import, open-folder and model-file dialogs


def test_the_scan_finds_a_hand_built_dialog(tmp_path: Path) -> None:
    bad = tmp_path / "dialogs.py"
    bad.write_text(
        "from PySide6.QtWidgets import QFileDialog\n"
        "dialog = QFileDialog(None)\n"
        "dialog.setOption(QFileDialog.Option.DontUseNativeDialog)\n"
    )
    found = problems_in(bad, tmp_path)
    assert len(found) == 2 and "built by hand" in found[0] and "native" in found[1]
