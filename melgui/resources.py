"""What the app shows that is not code (icons, style sheets): the project's `resources/`.

The files live in the top-level `resources/` folder of the source tree. A wheel ships
that folder as the package data `melgui/assets/` (pyproject maps the package
`melgui.assets` to `resources/`), and so does the PyInstaller bundle (packaging/
melgui.spec). Files are looked up through importlib.resources inside the installed
package, and in the source tree beside the `melgui` folder when running from a checkout
or an editable install; never relative to the working folder. No Qt here: the window
builds its QIcon from these paths.
"""

from __future__ import annotations

import atexit
import contextlib
import importlib.resources
from importlib.resources.abc import Traversable
from pathlib import Path

APP_ID = "ai.meliai.melgui"
"""Reverse-DNS id: the desktop entry's file name, the icon name, the AppStream id.

The window passes it to `QGuiApplication.setDesktopFileName` so Wayland and X11 docks
match the running window to its desktop entry and icon.
"""

ICON_SIZES: tuple[int, ...] = (16, 24, 32, 48, 64, 128, 256, 512)

# Resources inside a zip are extracted once and kept until the process exits.
_extracted = contextlib.ExitStack()
atexit.register(_extracted.close)


class ResourceMissingError(FileNotFoundError):
    """A resource the package should ship is not there (a broken install or bundle)."""


ASSETS = "assets"
"""The folder inside the installed `melgui` package that holds `resources/`."""


def resources_root() -> Traversable:
    """The folder holding the resources: the installed package data, else the checkout's."""
    installed = importlib.resources.files("melgui").joinpath(ASSETS)
    if installed.is_dir():
        return installed
    checkout = Path(__file__).resolve().parent.parent / "resources"
    if checkout.is_dir():
        return checkout
    raise ResourceMissingError(
        f"melgui resources missing: neither melgui/{ASSETS}/ nor {checkout} (reinstall melgui)"
    )


def resource_path(name: str) -> Traversable:
    """The resource `name` ("icons/melgui.svg"); raises ResourceMissingError."""
    item = resources_root()
    for part in name.split("/"):
        if part in ("", ".", ".."):
            raise ResourceMissingError(f"Not a resource name: {name!r}")
        item = item.joinpath(part)
    if not item.is_file():
        raise ResourceMissingError(f"melgui resource missing: {name} (reinstall melgui)")
    return item


def resource_file(name: str) -> Path:
    """A real file-system path for `name`, for APIs that need one (QIcon, QFile)."""
    item = resource_path(name)
    if isinstance(item, Path):
        return item
    return _extracted.enter_context(importlib.resources.as_file(item))


def icon_svg_path() -> Path:
    """The scalable application icon."""
    return resource_file("icons/melgui.svg")


def icon_png_paths() -> list[Path]:
    """The application icon's PNG renderings, smallest first, one per ICON_SIZES entry."""
    return [resource_file(f"icons/melgui-{size}.png") for size in ICON_SIZES]
