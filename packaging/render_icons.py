"""Render the application icon's PNG sizes from its SVG sources with Qt's SVG renderer.

    python packaging/render_icons.py           # rewrite melgui/resources/icons/melgui-N.png
    python packaging/render_icons.py --check   # exit 1 when a PNG is missing or stale

Sizes up to SMALL_MAX come from `melgui-small.svg` (bolder, no spark), the rest from
`melgui.svg`. Runs offscreen; needs only PySide6-Essentials (QtSvg).
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

ICONS = Path(__file__).resolve().parent.parent / "melgui" / "resources" / "icons"
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale PNGs")
    options = parser.parse_args(argv)
    _app = QGuiApplication.instance() or QGuiApplication([])
    stale: list[str] = []
    for size in SIZES:
        target = ICONS / f"melgui-{size}.png"
        png = render_png(source_for(size), size)
        if target.is_file() and target.read_bytes() == png:
            continue
        stale.append(target.name)
        if not options.check:
            target.write_bytes(png)
    if options.check:
        if stale:
            print(f"render_icons: stale or missing: {', '.join(stale)}", file=sys.stderr)
            return 1
        print(f"render_icons: {len(SIZES)} PNGs up to date")
        return 0
    print(f"render_icons: wrote {len(stale)} of {len(SIZES)} PNGs into {ICONS}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
