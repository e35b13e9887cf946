"""`melgui [FOLDER]`: the Qt application on a qasync event loop, and a clean shutdown."""

from __future__ import annotations

import asyncio
import contextlib
import gc
import logging
import os
import signal
import sys
from typing import Literal

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


# How a window runs its agents: in the user's melgui host ("user", the command line's
# default), in a host of its own ("own": `--no-host`), or in itself ("none": no host at
# all, for the tests' and the benches' harnesses only; the command line never says it).
Hosting = Literal["user", "own", "none"]
FIRST_PAINT_WAIT = 2.0  # seconds a window's own host waits for the window's first paint


def run_app(folder: str, *, host: Hosting = "none") -> int:
    """Open the window on `folder` and run until it closes; returns the exit status.
    `host="user"` (the command line's default): the window is a view of the user's melgui
    host (started when none runs): its main conversation, workers and terminals run
    there. `host="own"` (`--no-host`): a view of a host of the window's own, its child,
    which ends with it. A folder on another machine has hosts of its own there."""
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
    if host != "none" and not remote:
        window.mcp.wait_for_host()  # the folder's MCP servers start in the host, not here
        window.models.host_known = asyncio.Event()  # its models too, when a host is had
        # No user's host on Windows yet: it listens on a Unix socket, and a named pipe
        # limited to the user's SID is not built; the window starts a host of its own.
        user = host == "user" and sys.platform != "win32"
        loop.create_task(attach_a_host(window, user=user) if user else attach_when_painted(window))
    else:  # its agents run in the window: their tools are loaded once it has painted
        loop.create_task(ready_when_painted(window))
    with loop:
        loop.run_until_complete(closed.wait())
        loop.run_until_complete(shutdown(window))
    return 0


async def attach_a_host(window: MainWindow, *, user: bool) -> None:
    """The window becomes a view of the user's host (`user`), or of a host of its own:
    when `user` is false, and when the user's host cannot be reached or refuses this
    version. Only when no host at all can start do its agents run in the window."""
    try:
        await _attach_a_host(window, user=user)
    finally:  # the model list waited for the host: from it, or from the server here
        window.models.host_settled(window.models.from_host)


async def _attach_a_host(window: MainWindow, *, user: bool) -> None:
    from melgui.host.client import VersionRefused
    from melgui.host.place import PlaceError
    from melgui.ui.window.host_view.view import attach_host, attach_private

    why = ""
    if user:
        try:
            await attach_host(window)
            return
        except (OSError, VersionRefused, PlaceError) as exc:
            why = f"The melgui host could not be had ({exc})"
    try:
        await attach_private(window, why)
    except OSError as exc:  # the window works on, its agents in itself
        first = f"{why}, and no" if why else "No"
        window.status.showMessage(
            f"{first} melgui host of this window's own could start ({exc}). The "
            "conversation and worker panes run in this window."
        )
        window.mcp.no_host()
        window.desk.ready_tools()


async def ready_when_painted(window: MainWindow) -> None:
    """A window that runs its agents itself loads their tools once it has painted (a
    view of a host loads none: the host runs them)."""
    from melgui.ui.window.host_view.view import painted

    await painted(window, FIRST_PAINT_WAIT)
    window.desk.ready_tools()


async def attach_when_painted(window: MainWindow) -> None:
    """A host of the window's own (`--no-host`), started once the window has painted
    (FIRST_PAINT_WAIT seconds at most): starting its child competes with the first paint
    for the machine. A prompt typed before the host answers runs as before it (in the
    window's first conversation, which the host continues once it is in)."""
    from melgui.ui.window.host_view.view import painted

    await painted(window, FIRST_PAINT_WAIT)
    await attach_a_host(window, user=False)


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
