"""The bundled Inter font, registered once at start-up, and the fonts the UI uses.

Inter is the UI and body font on Linux (whose default sans differs by distribution and
is often a poor fit); macOS and Windows keep their system font, which is better tuned
for their screens."""

from __future__ import annotations

import logging
import sys

from PySide6.QtGui import QFont, QFontDatabase

from melgui import resources
from melgui.ui.runtime.look.tokens import TYPE_BODY, TYPE_UI

log = logging.getLogger(__name__)

FAMILY = "Inter"
POINTS_PER_PIXEL = 72 / 96  # sizes are set in points (zoom steps are points) at 96 dpi
FACES = ("Regular", "Medium", "SemiBold", "Bold", "Italic")
_registered: list[str] = []


def register_fonts() -> list[str]:
    """Load the bundled faces into Qt (once); the families they add (none if missing)."""
    if _registered:
        return _registered
    for face in FACES:
        try:
            path = resources.resource_file(f"fonts/Inter-{face}.woff2")
        except resources.ResourceMissingError as exc:
            log.warning("bundled font missing: %s", exc)
            continue
        font_id = QFontDatabase.addApplicationFont(str(path))
        for family in QFontDatabase.applicationFontFamilies(font_id):
            if family not in _registered:
                _registered.append(family)
    try:  # the transcript's icons (look.icons.GLYPHS)
        glyphs = resources.resource_file("lucide/lucide-glyphs.ttf")
        QFontDatabase.addApplicationFont(str(glyphs))
    except resources.ResourceMissingError as exc:
        log.warning("bundled icon font missing: %s", exc)
    return _registered


def uses_bundled_font() -> bool:
    return not sys.platform.startswith(("darwin", "win"))


def ui_font(pixels: int = TYPE_UI) -> QFont:
    """The UI font at `pixels` (Inter where it is the better choice, else the system's)."""
    families = register_fonts()  # the icon font too, wherever the UI font comes from
    if uses_bundled_font() and FAMILY in families:
        font = QFont(FAMILY)
    else:
        font = QFontDatabase.systemFont(QFontDatabase.SystemFont.GeneralFont)
    font.setPointSizeF(pixels * POINTS_PER_PIXEL)
    font.setHintingPreference(QFont.HintingPreference.PreferNoHinting)
    return font


def body_font() -> QFont:
    return ui_font(TYPE_BODY)
