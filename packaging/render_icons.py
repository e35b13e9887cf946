"""Render the application icon's PNG sizes from its SVG sources with Qt's SVG renderer.

    python packaging/render_icons.py           # rewrite the PNGs, .ico and .icns
    python packaging/render_icons.py --check   # exit 1 when one is missing or stale

PNGs go to melgui/resources/icons/melgui-N.png (package data: the window and the desktop
entry use them); packaging/icons/melgui.ico and melgui.icns are for the Windows and macOS
builds only. Sizes up to SMALL_MAX come from `melgui-small.svg` (bolder, no spark), the
rest from `melgui.svg`. Runs offscreen; needs only PySide6-Essentials (QtSvg).
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from icon_containers import ICNS_SIZES, ICO_SIZES, icns_bytes, ico_bytes

ICONS = Path(__file__).resolve().parent.parent / "melgui" / "resources" / "icons"
PLATFORM_ICONS = Path(__file__).resolve().parent / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
SMALL_MAX = 32


def source_for(size: int) -> Path:
    return ICONS / ("melgui-small.svg" if size <= SMALL_MAX else "melgui.svg")


def render_png(svg: Path, size: int) -> bytes:
    """The SVG drawn into a size×size transparent image, encoded as PNG."""
    renderer = QSvgRenderer(str(svg))
    if not renderer.isValid():
        raise SystemExit(f"render_icons: not a valid SVG: {svg}")
    image = QImage(size, size, QImage.Format.Format_ARGB32_Premultiplied)
    image.fill(Qt.GlobalColor.transparent)
    painter = QPainter(image)
    painter.setRenderHint(QPainter.RenderHint.Antialiasing)
    painter.setRenderHint(QPainter.RenderHint.SmoothPixmapTransform)
    renderer.render(painter, QRectF(0, 0, size, size))
    painter.end()
    data = QByteArray()
    buffer = QBuffer(data)
    buffer.open(QIODevice.OpenModeFlag.WriteOnly)
    image.convertToFormat(QImage.Format.Format_ARGB32).save(buffer, "PNG", 9)  # type: ignore[call-overload]
    buffer.close()
    return bytes(data.data())


def outputs() -> dict[Path, bytes]:
    """Every file this script makes, with the bytes it should hold."""
    pngs = {size: render_png(source_for(size), size) for size in {*SIZES, *ICO_SIZES, *ICNS_SIZES}}
    files = {ICONS / f"melgui-{size}.png": pngs[size] for size in SIZES}
    files[PLATFORM_ICONS / "melgui.ico"] = ico_bytes(pngs)
    files[PLATFORM_ICONS / "melgui.icns"] = icns_bytes(pngs)
    return files


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    options = parser.parse_args(argv)
    _app = QGuiApplication.instance() or QGuiApplication([])
    files = outputs()
    stale = [
        path for path, data in files.items() if not path.is_file() or path.read_bytes() != data
    ]
    if options.check:
        if stale:
            names = ", ".join(path.name for path in stale)
            print(f"render_icons: stale or missing: {names}", file=sys.stderr)
            return 1
        print(f"render_icons: {len(files)} icon files up to date")
        return 0
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[path])
    print(f"render_icons: wrote {len(stale)} of {len(files)} icon files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
