"""The Lucide icons melgui ships (resources/lucide), tinted by the theme.

Lucide draws with `currentColor`; an icon is drawn with that replaced by a theme colour,
as a QIcon that renders the SVG at whatever size and device pixel ratio it is asked
for, so it is crisp on a high-DPI screen. Icon-only buttons get their accessible name
and tooltip together (`icon_button`).
"""

from __future__ import annotations

import atexit
import functools
import shutil
import tempfile
from pathlib import Path

from PySide6.QtCore import QByteArray, QRect, QSize, Qt
from PySide6.QtGui import QIcon, QIconEngine, QPainter, QPixmap
from PySide6.QtSvg import QSvgRenderer
from PySide6.QtWidgets import QAbstractButton, QToolButton, QWidget

from melgui import resources
from melgui.ui.runtime.look.tokens import ICON

# The icons the transcript draws as text, from resources/lucide/lucide-glyphs.ttf (Lucide's
# icon font cut to these): a glyph costs a fraction of an image to lay out and paint, is
# tinted by the text's colour and is crisp at any pixel ratio.
GLYPH_FAMILY = "lucide"
GLYPHS = {
    "file-pen": 0xE31F,
    "file-plus": 0xE0C9,
    "file-text": 0xE0CC,
    "terminal": 0xE181,
    "search": 0xE151,
    "folder-tree": 0xE33C,
    "globe": 0xE0E8,
    "list-checks": 0xE1D0,
    "bot": 0xE1BB,
    "plug": 0xE37F,
    "brain": 0xE3C6,
    "wrench": 0xE1B1,
    "chevron-right": 0xE06F,
    "chevron-down": 0xE06D,
    "panel-right": 0xE431,
    "copy": 0xE09E,
    "pencil": 0xE1F9,
    "undo-2": 0xE2A1,
}

# What each thing melgui shows is drawn with (a Lucide name).
KIND_ICONS = {
    "edit": "file-pen",
    "write": "file-plus",
    "read": "file-text",
    "run": "terminal",
    "search": "search",
    "list": "folder-tree",
    "fetch": "globe",
    "plan": "list-checks",
    "agent": "bot",
    "mcp": "plug",
    "think": "brain",
    "other": "wrench",
}


@functools.cache
def svg_text(name: str) -> str:
    """The SVG source of Lucide icon `name`; an empty one if it is not shipped."""
    try:
        return resources.resource_path(f"lucide/{name}.svg").read_text(encoding="utf-8")
    except resources.ResourceMissingError:
        return '<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 24 24"/>'


def tinted_svg(name: str, colour: str) -> bytes:
    return svg_text(name).replace("currentColor", colour).encode()


@functools.cache
def _icon_folder() -> Path:
    folder = Path(tempfile.mkdtemp(prefix="melgui-icons-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return folder


@functools.cache
def icon_file(name: str, colour: str) -> str:
    """A file holding Lucide icon `name` tinted `colour`, for a stylesheet's `url()` (a
    check box's tick, a chip's chevron): style sheets take images by path only. Written
    once per process, removed at exit; a forward-slash path, as style sheets want."""
    path = _icon_folder() / f"{name}-{colour.lstrip('#')}.svg"
    path.write_bytes(tinted_svg(name, colour))
    return path.as_posix()


class _TintedEngine(QIconEngine):
    """Renders the tinted SVG at the asked size (and the screen's pixel ratio), once per
    size: a button's style asks for the pixmap at every paint of the button."""

    def __init__(self, name: str, colour: str, disabled: str) -> None:
        super().__init__()
        self._name, self._colour, self._disabled = name, colour, disabled
        self._renderers: dict[str, QSvgRenderer] = {}
        self._pixmaps: dict[tuple[int, int, bool, float], QPixmap] = {}

    def _renderer(self, colour: str) -> QSvgRenderer:
        if colour not in self._renderers:
            self._renderers[colour] = QSvgRenderer(QByteArray(tinted_svg(self._name, colour)))
        return self._renderers[colour]

    def paint(self, painter: QPainter, rect: QRect, mode: QIcon.Mode, state: QIcon.State) -> None:
        colour = self._disabled if mode == QIcon.Mode.Disabled else self._colour
        self._renderer(colour).render(painter, rect)

    def pixmap(self, size: QSize, mode: QIcon.Mode, state: QIcon.State) -> QPixmap:
        return self.scaledPixmap(size, mode, state, 1.0)

    def scaledPixmap(
        self, size: QSize, mode: QIcon.Mode, state: QIcon.State, scale: float
    ) -> QPixmap:
        key = (size.width(), size.height(), mode == QIcon.Mode.Disabled, scale)
        drawn = self._pixmaps.get(key)
        if drawn is not None:
            return drawn
        pixmap = QPixmap(size * scale)
        if pixmap.isNull():  # asked at no size (a button squeezed to nothing): no painter
            return pixmap
        pixmap.setDevicePixelRatio(scale)
        pixmap.fill(Qt.GlobalColor.transparent)
        painter = QPainter(pixmap)
        self.paint(painter, QRect(0, 0, size.width(), size.height()), mode, state)
        painter.end()
        self._pixmaps[key] = pixmap
        return pixmap

    def clone(self) -> QIconEngine:
        return _TintedEngine(self._name, self._colour, self._disabled)


def icon(name: str, colour: str, disabled: str | None = None) -> QIcon:
    """Lucide icon `name` drawn in `colour` (and `disabled` when its button is off)."""
    return QIcon(_TintedEngine(name, colour, disabled or colour))


def icon_button(
    name: str, words: str, colour: str, parent: QWidget | None = None, *, keys: str = ""
) -> QToolButton:
    """A flat icon-only button; `words` are its accessible name and its tooltip (with
    `keys`, the shortcut, in the tooltip)."""
    button = QToolButton(parent)
    button.setAutoRaise(True)
    button.setIcon(icon(name, colour))
    button.setIconSize(QSize(ICON, ICON))
    name_icon(button, words, keys=keys)
    return button


def name_icon(button: QAbstractButton, words: str, *, keys: str = "") -> None:
    """Give an icon button its accessible name and tooltip."""
    button.setAccessibleName(words)
    button.setToolTip(f"{words} ({keys})" if keys else words)
