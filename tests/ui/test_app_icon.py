"""The window carries the application icon from package data, in every shipped size."""

from __future__ import annotations

from PySide6.QtCore import QSize
from pytestqt.qtbot import QtBot

from melgui import resources
from melgui.ui.app import app_icon


def test_icon_has_every_size(qtbot: QtBot) -> None:
    icon = app_icon()
    assert not icon.isNull()
    sizes = {(size.width(), size.height()) for size in icon.availableSizes()}
    assert {(16, 16), (48, 48), (256, 256)} <= sizes
    assert len(sizes) == len(resources.icon_png_paths())
    assert not icon.pixmap(QSize(64, 64)).isNull()
