"""What the bundle keeps and drops, checked without building it."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from tests.packaging.scripts import ROOT, load_script

policy = load_script("bundle_policy")
build = load_script("build")


@pytest.mark.parametrize(
    ("dest", "kept"),
    [
        ("PySide6/Qt/plugins/platforms/libqxcb.so", True),
        ("PySide6/Qt/plugins/platforms/libqwayland.so", True),
        ("PySide6/Qt/plugins/platforms/libqoffscreen.so", True),
        ("PySide6/Qt/plugins/platforms/libqvnc.so", False),
        ("PySide6/Qt/plugins/platforms/libqeglfs.so", False),
        ("PySide6/Qt/plugins/platformthemes/libqgtk3.so", False),
        ("PySide6/Qt/plugins/imageformats/libqsvg.so", True),
        ("PySide6/Qt/plugins/imageformats/libqpdf.so", False),
        ("PySide6/Qt/plugins/iconengines/libqsvgicon.so", True),
        ("PySide6/Qt/plugins/platforminputcontexts/libqtvirtualkeyboardplugin.so", False),
        ("PySide6/Qt/plugins/egldeviceintegrations/libqeglfs-kms-integration.so", False),
        ("PySide6/Qt/plugins/sqldrivers/libqsqlite.so", False),
        ("PySide6/Qt/translations/qtbase_de.qm", False),
        ("PySide6/Qt/lib/libQt6Core.so.6", True),
        ("PySide6/QtCore.abi3.so", True),
        # Windows and macOS layouts, same policy.
        ("PySide6\\plugins\\platforms\\qwindows.dll", True),
        ("PySide6\\plugins\\platforms\\qminimal.dll", True),
        ("PySide6\\plugins\\styles\\qmodernwindowsstyle.dll", True),
        ("PySide6\\translations\\qtbase_fr.qm", False),
        ("PySide6/Qt/plugins/platforms/libqcocoa.dylib", True),
        ("numpy/_core/_multiarray_umath.cpython-311-x86_64-linux-gnu.so", True),
    ],
)
def test_keep_qt_file(dest: str, kept: bool) -> None:
    assert policy.keep_qt_file(dest) is kept


def test_plugin_base_names_ignore_prefix_and_suffix() -> None:
    assert policy.plugin_base_name("libqxcb.so") == "qxcb"
    assert policy.plugin_base_name("libqcocoa.dylib") == "qcocoa"
    assert policy.plugin_base_name("qwindows.dll") == "qwindows"
    assert policy.plugin_base_name("libxdg-shell.so") == "xdg-shell"


def test_qt_modules_imported_reads_every_import_form(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text(
        "from PySide6.QtSvg import QSvgRenderer\n"
        "import PySide6.QtNetwork\n"
        "from PySide6 import (QtCore,\n QtPrintSupport)\n"
        "from PySide6 import QtGui, QtWidgets\n"
    )
    assert policy.qt_modules_imported(tmp_path) == {
        "QtSvg",
        "QtNetwork",
        "QtCore",
        "QtGui",
        "QtWidgets",
    }


def test_no_module_the_app_imports_is_excluded() -> None:
    used = policy.qt_modules_imported()
    available = ["QtCore", "QtGui", "QtWidgets", "QtQml", "QtNetwork", *sorted(used)]
    excluded = policy.qt_modules_excluded(available, used)
    assert "PySide6.QtQml" in excluded
    assert not {f"PySide6.{name}" for name in used} & set(excluded)
    assert not {"PySide6.QtCore", "PySide6.QtGui", "PySide6.QtWidgets"} & set(excluded)


def melgui_imports() -> set[str]:
    """Top-level names of every module imported anywhere in melgui/."""
    names: set[str] = set()
    for source in (ROOT / "melgui").rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names


def test_python_excludes_spare_what_melgui_imports() -> None:
    imported = melgui_imports()
    assert {"PySide6", "httpx", "pydantic"} <= imported
    assert not imported & set(policy.PYTHON_EXCLUDES)
    assert not imported & set(policy.OTHER_QT_BINDINGS)


@pytest.mark.parametrize(
    ("relative", "part"),
    [
        ("melgui", "./melgui"),
        ("rg", "./rg"),
        ("share/ai.meliai.melgui.desktop", "share"),
        ("_internal/PySide6/Qt/lib/libQt6Core.so.6", "PySide6/Qt/lib/libQt6Core.so.6"),
        ("_internal/PySide6/Qt/plugins/platforms/libqxcb.so", "PySide6/Qt/plugins/platforms"),
        ("_internal/PySide6/QtWidgets.abi3.so", "PySide6/QtWidgets.abi3.so"),
        ("_internal/numpy/_core/x.so", "numpy"),
        ("_internal/libpython3.11.so.1.0", "libpython3.11.so.1.0"),
    ],
)
def test_report_groups_files_into_parts(relative: str, part: str) -> None:
    assert build.part_of(Path(relative)) == part


def test_report_measures_and_orders_parts(tmp_path: Path) -> None:
    (tmp_path / "_internal" / "big").mkdir(parents=True)
    (tmp_path / "_internal" / "big" / "a.bin").write_bytes(b"x" * 3000)
    (tmp_path / "_internal" / "small.so").write_bytes(b"x" * 10)
    (tmp_path / "melgui").write_bytes(b"x" * 200)
    (tmp_path / "_internal" / "link.so").symlink_to("small.so")
    report = build.measure(tmp_path)
    assert report.total_bytes == 3210
    assert report.file_count == 3
    assert report.parts == [("big", 3000), ("./melgui", 200), ("small.so", 10)]
    assert "biggest parts" in "\n".join(report.lines())
