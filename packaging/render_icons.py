"""Render the application icon's PNG sizes from its SVG sources with Qt's SVG renderer.

    python packaging/render_icons.py           # rewrite the PNGs, .ico and .icns
    python packaging/render_icons.py --check   # exit 1 when one is missing or stale

A committed rendering counts as current when it has the same size and an alpha channel
and its pixels match a fresh rendering within a small tolerance: Qt's rasteriser and PNG
encoder differ slightly between releases (antialiasing of edges, compression), so a
byte-for-byte comparison would call every icon stale on another Qt. A changed SVG moves
far more pixels than that tolerance allows, so a stale icon is still caught.

PNGs go to resources/icons/melgui-N.png (shipped as package data: the window and the
desktop entry use them); packaging/icons/melgui.ico and melgui.icns are for the Windows
and macOS builds only. Sizes up to SMALL_MAX come from `melgui-small.svg` (bolder, no spark), the
rest from `melgui.svg`. Runs offscreen; needs only PySide6-Essentials (QtSvg).
"""

from __future__ import annotations

import argparse
import os
import struct
import sys
from pathlib import Path

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

from PySide6.QtCore import QBuffer, QByteArray, QIODevice, QRectF, Qt
from PySide6.QtGui import QGuiApplication, QImage, QPainter
from PySide6.QtSvg import QSvgRenderer

sys.path.insert(0, str(Path(__file__).resolve().parent))
from icon_containers import ICNS_SIZES, ICO_SIZES, icns_bytes, icns_pngs, ico_bytes, ico_pngs

ICONS = Path(__file__).resolve().parent.parent / "resources" / "icons"
PLATFORM_ICONS = Path(__file__).resolve().parent / "icons"
SIZES = (16, 24, 32, 48, 64, 128, 256, 512)
SMALL_MAX = 32
# Tolerance against a fresh rendering: the mean difference per channel (0-255) and the
# share of pixels with any channel off by more than DIFFERENT_BY.
MEAN_TOLERANCE = 2.0
DIFFERENT_BY = 48
DIFFERENT_SHARE = 0.02


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


def _pixels(png: bytes) -> QImage:
    image = QImage()
    if not image.loadFromData(png, "PNG"):  # type: ignore[call-overload]
        raise ValueError("not a readable PNG")
    return image


def png_difference(committed: bytes, fresh: bytes) -> str | None:
    """Why `committed` is not a current rendering of what `fresh` shows, or None."""
    try:
        old = _pixels(committed)
    except ValueError as exc:
        return str(exc)
    new = _pixels(fresh)
    if old.size() != new.size():
        return f"size {old.width()}x{old.height()}, expected {new.width()}x{new.height()}"
    if not old.hasAlphaChannel():
        return "no alpha channel"
    a = old.convertToFormat(QImage.Format.Format_RGBA8888)
    b = new.convertToFormat(QImage.Format.Format_RGBA8888)
    left, right = bytes(a.constBits()), bytes(b.constBits())  # type: ignore[call-overload]
    total = 0
    far = 0
    for index in range(0, len(left), 4):
        pixel = [abs(left[index + k] - right[index + k]) for k in range(4)]
        total += sum(pixel)
        far += max(pixel) > DIFFERENT_BY
    pixels = len(left) // 4
    mean = total / len(left)
    if mean > MEAN_TOLERANCE or far / pixels > DIFFERENT_SHARE:
        return f"differs from the SVG (mean {mean:.2f}, {far} of {pixels} pixels off)"
    return None


def _embedded(path: Path, data: bytes) -> dict[object, bytes]:
    if path.suffix == ".ico":
        return dict(ico_pngs(data))
    if path.suffix == ".icns":
        return dict(icns_pngs(data))
    return {"png": data}


def file_difference(path: Path, expected: bytes) -> str | None:
    """Why the file at `path` is not a current rendering of `expected`, or None."""
    if not path.is_file():
        return "missing"
    try:
        have, want = _embedded(path, path.read_bytes()), _embedded(path, expected)
    except (ValueError, struct.error) as exc:
        return str(exc)
    if have.keys() != want.keys():
        return "holds other sizes"
    for key, png in want.items():
        problem = png_difference(have[key], png)
        if problem:
            return problem if key == "png" else f"{key!r}: {problem}"
    return None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="only report stale files")
    options = parser.parse_args(argv)
    _app = QGuiApplication.instance() or QGuiApplication([])
    files = outputs()
    if options.check:
        problems = {path: file_difference(path, data) for path, data in files.items()}
        stale = {path: why for path, why in problems.items() if why}
        if stale:
            for path, why in stale.items():
                print(f"render_icons: stale: {path.name}: {why}", file=sys.stderr)
            return 1
        print(f"render_icons: {len(files)} icon files up to date")
        return 0
    stale = [path for path, data in files.items() if file_difference(path, data)]
    for path in stale:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(files[path])
    print(f"render_icons: wrote {len(stale)} of {len(files)} icon files")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
