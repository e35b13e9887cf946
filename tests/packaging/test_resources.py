"""The app icon as package data: every size present, found without the working folder."""

from __future__ import annotations

import os
import struct
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import ModuleType

import pytest

from melgui import resources
from tests.packaging.scripts import PACKAGING, load_script, run_python


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
    assert Path(run_python(script, cwd=tmp_path).strip()).is_file()


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
    assert run_python(script).strip() == "False"


def test_ico_and_icns_hold_every_size_as_png() -> None:
    icon_containers = load_script("icon_containers")
    pngs = {size: _fake_png(size) for size in (16, 24, 32, 48, 64, 128, 256, 512, 1024)}
    ico = icon_containers.ico_bytes(pngs)
    reserved, kind, count = struct.unpack("<HHH", ico[:6])
    assert (reserved, kind, count) == (0, 1, len(icon_containers.ICO_SIZES))
    for index, size in enumerate(icon_containers.ICO_SIZES):
        side, _, _, _, _, _, length, offset = struct.unpack(
            "<BBBBHHII", ico[6 + 16 * index : 22 + 16 * index]
        )
        assert side == (0 if size == 256 else size)
        assert ico[offset : offset + length] == pngs[size]
    icns = icon_containers.icns_bytes(pngs)
    assert icns[:4] == b"icns" and struct.unpack(">I", icns[4:8])[0] == len(icns)
    position, kinds = 8, []
    while position < len(icns):
        kinds.append(icns[position : position + 4])
        position += struct.unpack(">I", icns[position + 4 : position + 8])[0]
    assert position == len(icns)
    assert kinds == [kind for kind, _ in icon_containers.ICNS_TYPES]


def test_containers_refuse_missing_sizes() -> None:
    icon_containers = load_script("icon_containers")
    with pytest.raises(ValueError, match="missing"):
        icon_containers.ico_bytes({16: _fake_png(16)})


def _fake_png(size: int) -> bytes:
    return b"\x89PNG\r\n\x1a\n" + struct.pack(">I", size) * 4


@pytest.fixture
def render_icons(qapp: object) -> ModuleType:
    """packaging/render_icons.py, with the test session's QApplication."""
    return load_script("render_icons")


def test_icon_check_tolerates_another_qt_but_catches_a_changed_svg(
    render_icons: ModuleType, tmp_path: Path
) -> None:
    committed = (render_icons.ICONS / "melgui-64.png").read_bytes()
    fresh = render_icons.render_png(render_icons.ICONS / "melgui.svg", 64)
    assert render_icons.png_difference(committed, fresh) is None
    # What another Qt does: other PNG compression, a few antialiased edge pixels moved.
    assert render_icons.png_difference(committed, _jittered(render_icons, fresh)) is None
    svg = (render_icons.ICONS / "melgui.svg").read_text()
    recoloured = tmp_path / "recoloured.svg"
    recoloured.write_text(svg.replace("#5458F0", "#F05454").replace("#3B1F9E", "#9E1F1F"))
    changed = render_icons.render_png(recoloured, 64)
    problem = render_icons.png_difference(committed, changed)
    assert problem is not None and problem.startswith("differs from the SVG")
    assert render_icons.png_difference(committed, render_icons.render_png(recoloured, 32)) == (
        "size 64x64, expected 32x32"
    )


def _jittered(render_icons: ModuleType, png: bytes) -> bytes:
    from PySide6.QtCore import QBuffer, QByteArray, QIODevice
    from PySide6.QtGui import QColor, QImage

    image = QImage.fromData(png).convertToFormat(QImage.Format.Format_ARGB32)
    for x in range(0, image.width(), 9):  # one pixel in 81 off by up to 40 per channel
        for y in range(0, image.height(), 9):
            colour = image.pixelColor(x, y)
            colour.setRed(min(255, colour.red() + 40))
            colour.setAlpha(max(0, colour.alpha() - 30))
            image.setPixelColor(x, y, QColor(colour))
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.save(buffer, "PNG", 0)  # type: ignore[call-overload]
    buffer.close()
    jittered = bytes(data.data())
    assert jittered != png
    return jittered


def test_icon_check_reads_the_pngs_inside_ico_and_icns(
    render_icons: ModuleType, tmp_path: Path
) -> None:
    files = render_icons.outputs()
    ico = render_icons.PLATFORM_ICONS / "melgui.ico"
    assert render_icons.file_difference(ico, files[ico]) is None
    broken = tmp_path / "melgui.ico"
    broken.write_bytes(b"\0\0\2\0" + files[ico][4:])
    assert render_icons.file_difference(broken, files[ico]) == "not an .ico file"
    assert render_icons.file_difference(tmp_path / "none.icns", b"") == "missing"
