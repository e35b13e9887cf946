"""The bundled font and icons: shipped with their licences, loaded, tinted, crisp at 2x."""

from __future__ import annotations

from PySide6.QtCore import QSize
from PySide6.QtGui import QColor, QFontInfo
from PySide6.QtWidgets import QApplication

from melgui import resources
from melgui.ui.runtime.look.fonts import FACES, register_fonts, ui_font, uses_bundled_font
from melgui.ui.runtime.look.icons import KIND_ICONS, icon, icon_button, svg_text
from melgui.ui.runtime.look.tokens import DARK, LIGHT, TYPE_UI


def test_the_font_and_the_icons_ship_with_their_licences() -> None:
    assert "SIL Open Font License" in resources.resource_path("fonts/LICENSE-Inter.txt").read_text()
    assert "ISC License" in resources.resource_path("lucide/LICENSE").read_text()
    for face in FACES:
        assert resources.resource_file(f"fonts/Inter-{face}.woff2").stat().st_size > 50_000


def test_inter_is_registered_and_is_the_ui_font_where_it_is_used(qapp: QApplication) -> None:
    assert "Inter" in register_fonts()
    font = ui_font()
    assert QFontInfo(font).pixelSize() == TYPE_UI  # at the 96 dpi the tests run at
    if uses_bundled_font():
        assert QFontInfo(font).family() == "Inter"  # really loaded, not a fallback


def test_every_icon_melgui_names_is_shipped() -> None:
    for name in KIND_ICONS.values():
        assert "currentColor" in svg_text(name), name


def test_an_icon_is_drawn_in_the_theme_colour_and_crisp_at_twice_the_pixels(
    qapp: QApplication,
) -> None:
    for colors in (LIGHT, DARK):
        pixmap = icon("terminal", colors.text).pixmap(QSize(16, 16), 2.0)
        assert pixmap.devicePixelRatio() == 2.0
        image = pixmap.toImage()
        assert (image.width(), image.height()) == (32, 32)  # drawn at 2x, not scaled up
        inked = [
            image.pixelColor(x, y)
            for x in range(32)
            for y in range(32)
            if image.pixelColor(x, y).alpha() == 255
        ]
        assert inked and all(c.name() == QColor(colors.text).name() for c in inked)


def test_an_icon_only_button_has_a_name_and_a_tooltip(qapp: QApplication) -> None:
    button = icon_button("copy", "Copy the message", LIGHT.text, keys="Ctrl+C")
    assert button.accessibleName() == "Copy the message"
    assert button.toolTip() == "Copy the message (Ctrl+C)"
    assert not button.icon().isNull()


def test_an_icon_asked_at_no_size_is_an_empty_pixmap_without_painting(qapp: QApplication) -> None:
    from PySide6.QtCore import QtMsgType, qInstallMessageHandler

    said: list[str] = []

    def keep(kind: QtMsgType, _context: object, text: str) -> None:
        said.append(text)

    previous = qInstallMessageHandler(keep)
    try:
        squeezed = icon("copy", LIGHT.text).pixmap(QSize(0, 0))
    finally:
        qInstallMessageHandler(previous)
    assert squeezed.isNull()
    assert not [text for text in said if "QPainter" in text], said  # no painter on nothing


def test_an_icon_is_drawn_once_per_size_and_state(qapp: QApplication) -> None:
    """A button's style asks for its icon's pixmap at every paint: the SVG is drawn the
    first time only (the same pixmap after), and again for another size or state."""
    from PySide6.QtGui import QIcon

    drawn = icon("copy", LIGHT.text, LIGHT.muted)
    first = drawn.pixmap(QSize(16, 16), 1.0)
    assert drawn.pixmap(QSize(16, 16), 1.0).cacheKey() == first.cacheKey()
    assert drawn.pixmap(QSize(16, 16), 2.0).cacheKey() != first.cacheKey()
    off = drawn.pixmap(QSize(16, 16), 1.0, QIcon.Mode.Disabled)
    assert off.cacheKey() != first.cacheKey()
    assert off.toImage() != first.toImage()  # the disabled colour
