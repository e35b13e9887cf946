"""The app icon as package data: every size present, found without the working folder."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from melgui import resources
from tests.packaging.scripts import PACKAGING, ROOT


def png_size(path: Path) -> tuple[int, int]:
    data = path.read_bytes()[:24]
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path.name} is not a PNG"
    width, height = struct.unpack(">II", data[16:24])
    return width, height


def test_icon_pngs_come_in_every_size_smallest_first() -> None:
    paths = resources.icon_png_paths()
    assert [png_size(p) for p in paths] == [(s, s) for s in resources.ICON_SIZES]
    assert all(p.is_file() for p in paths)


def test_icon_svg_is_svg() -> None:
    root = ET.parse(resources.icon_svg_path()).getroot()
    assert root.tag == "{http://www.w3.org/2000/svg}svg"
    assert root.get("viewBox") == "0 0 512 512"


def test_resources_are_found_from_any_working_folder(tmp_path: Path) -> None:
    script = "from melgui.resources import icon_png_paths; print(icon_png_paths()[-1])"
    result = subprocess.run(
        [sys.executable, "-c", script],
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert Path(result.stdout.strip()).is_file()


@pytest.mark.parametrize("name", ["../cli.py", "icons/../../cli.py", "", "icons/nope.png"])
def test_bad_or_missing_names_raise_one_clear_error(name: str) -> None:
    with pytest.raises(resources.ResourceMissingError):
        resources.resource_path(name)


def test_pngs_match_their_svg_sources() -> None:
    result = subprocess.run(
        [sys.executable, str(PACKAGING / "render_icons.py"), "--check"],
        env={**os.environ, "QT_QPA_PLATFORM": "offscreen"},
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert result.returncode == 0, result.stderr + "\n(run: python packaging/render_icons.py)"


def test_resources_module_imports_no_qt() -> None:
    script = "import sys, melgui.resources; "
    script += "print(any(m.startswith('PySide6') for m in sys.modules))"
    result = subprocess.run(
        [sys.executable, "-c", script],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    assert result.stdout.strip() == "False"
