"""`melgui [FOLDER]`: the Qt application on a qasync event loop, and a clean shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import sys

from PySide6.QtGui import QIcon
from PySide6.QtWidgets import QApplication, QMessageBox

from melgui import resources
from melgui.core.config.settings import Settings, SettingsError, load_settings
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import settle_ending
from melgui.ui.runtime.qt_loop import QtEventLoop
from melgui.ui.runtime.theme import apply_theme
from melgui.ui.window.main_window import MainWindow, build_main_window

log = logging.getLogger(__name__)


def _settings_or_defaults() -> tuple[Settings, str | None]:
    notices: list[str] = []
    try:
        return load_settings(notices=notices), " ".join(notices) or None
    except SettingsError as exc:
        # A broken file must not stop the app: defaults now, the file is kept as it is.
        return Settings(), f"{exc} — using defaults; fix or delete the file."


def app_icon() -> QIcon:
    """The application icon in every shipped size; an empty icon if they are missing."""
    icon = QIcon()
    try:
        paths = resources.icon_png_paths()
    except resources.ResourceMissingError as exc:
        log.warning("no application icon: %s", exc)
        return icon
    for path in paths:
        icon.addFile(str(path))
    return icon


def run_app(folder: str, *, with_host: bool = False) -> int:
    """Open the window on `folder` and run until it closes; returns the exit status.
    `with_host` (the command line's default): the window is a view of the melgui host
    (started when none runs): its main conversation, workers and terminals run there.
    A folder on another machine has hosts of its own there, and none here."""
    remote = ""
    if folder.startswith("ssh://"):  # a folder on another machine: checked, then opened there
        from melgui.remote.target import TargetError, parse_folder
        from melgui.ui.panes.remote.remote_side import stand_in_for

        try:
            parse_folder(folder)
        except TargetError as exc:
            print(f"melgui: {exc}", file=sys.stderr)
            return 2
        remote, folder = folder, stand_in_for(folder)
    if not os.path.isdir(folder):
        print(f"melgui: {folder!r} is not a folder", file=sys.stderr)
        return 2
    app = QApplication.instance() or QApplication(sys.argv)
    assert isinstance(app, QApplication)
    app.setApplicationName("melgui")
    app.setOrganizationName("melgui")
    app.setDesktopFileName(resources.APP_ID)  # docks match the window to its desktop entry
    app.setWindowIcon(app_icon())
    settings, problem = _settings_or_defaults()
    apply_theme(app, settings.theme)
    loop = QtEventLoop(app)
    asyncio.set_event_loop(loop)
    closed = asyncio.Event()
    app.aboutToQuit.connect(closed.set)
    window = build_main_window(folder, settings)
    if remote:
        window.remote.open_folder(remote)

    def end_now() -> None:  # nobody is at the window to answer "quit anyway?"
        window.guard.allow()
        app.closeAllWindows()

    for number in (signal.SIGINT, signal.SIGTERM):
        # Ctrl+C in the terminal or a polite kill closes the window without asking.
        with contextlib.suppress(NotImplementedError, RuntimeError, ValueError):
            loop.add_signal_handler(number, end_now)
    window.show()
    # Start-up objects (Qt wrappers, modules, the loaded model) live as long as the app:
    # keep them out of the collector's full passes, which otherwise stall streaming.
    gc.freeze()
    if problem:
        QMessageBox.warning(window, "Settings", problem)
    # No host on Windows yet: it listens on a Unix socket, and a named pipe limited to
    # the user's SID is not built; the window runs its agents, as with --no-host.
    if with_host and not remote and sys.platform != "win32":
        window.mcp.wait_for_host()  # the folder's MCP servers start in the host, not here
        loop.create_task(_attach_host(window))
    with loop:
        loop.run_until_complete(closed.wait())
        loop.run_until_complete(shutdown(window))
    return 0


async def _attach_host(window: MainWindow) -> None:
    from melgui.host.client import VersionRefused
    from melgui.ui.window.host_view.view import attach_host

    try:
        await attach_host(window)
    except (OSError, VersionRefused) as exc:  # the window works on, its agents in itself
        window.status.showMessage(
            f"No melgui host: {exc}. The conversation and worker panes run in this window."
        )
        window.mcp.no_host()


async def shutdown(window: MainWindow) -> None:
    """Cancel every task, stop turns and tools, close the connection (bounded in time)."""
    try:
        await within(window.aclose(), timeout=5)
    except (TimeoutError, asyncio.CancelledError):
        log.warning("shutdown took too long; quitting anyway")
    except Exception:
        log.exception("shutdown failed")
    # A tool's child cut short as it started (its task cancelled twice) is still being
    # reaped: let that end before the loop closes.
    await settle_ending(timeout=2)
