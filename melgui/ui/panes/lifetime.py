"""How a window's panes live and end: the pane area shown while it has a pane, the
worktrees an earlier run left offered once the window shows, new panes opening in the
project folder the window moved to, and every pane's program or worker ended when the
window closes or the app quits.

    manager = PaneManager(PaneArea(), folder, worker_factory=..., parent=window)
    keep_panes(manager, window)          # the window places manager.area itself
    follow_folder(manager, folder, window)   # each time the window changes folder
"""

from __future__ import annotations

import atexit
import contextlib
import weakref
from pathlib import Path

from PySide6.QtCore import QObject, QTimer
from PySide6.QtWidgets import QApplication, QWidget

from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.remote.worktrees_left import offer_there_soon
from melgui.ui.panes.worktree_recovery import offer_soon


class _EndPanes(QObject):
    """Ends every pane's program or worker when the app quits (the window's close does too).

    A child of the manager, so Qt disconnects it when the window goes away.
    """

    def __init__(self, manager: PaneManager, window: QWidget) -> None:
        super().__init__(manager)
        self._manager = manager
        self._window = window

    def on_about_to_quit(self) -> None:
        # qasync's run_until_complete also emits aboutToQuit whenever its exec() returns;
        # only a quit with the window gone is the app's end.
        if not self._window.isVisible():
            self._manager.shutdown()


def _end_at_exit(manager_ref: weakref.ref[PaneManager]) -> None:
    manager = manager_ref()
    if manager is not None:
        with contextlib.suppress(RuntimeError):  # Qt may have gone first
            manager.shutdown()


def keep_panes(manager: PaneManager, window: QWidget) -> None:
    """Show `manager.area` only while it holds a pane, offer left worktrees once `window`
    (the panes' parent) shows, and end every pane with the app or the interpreter."""
    area = manager.area
    area.hide()  # shown with its first pane, so the chat has the room until then

    def on_panes_changed() -> None:
        has_panes = bool(manager.registry.all())
        if has_panes and area.isHidden():
            area.show()  # the window's LayoutKeeper shares the width out
        elif not has_panes and not area.isHidden():
            area.hide()

    manager.panesChanged.connect(on_panes_changed)
    # Worktrees an earlier run left (a crash, a quit with work in them), here and on the
    # hosts it made some on: offered once the window shows.
    QTimer.singleShot(0, lambda: offer_soon(manager, window))
    QTimer.singleShot(0, lambda: offer_there_soon(manager, window))
    ender = _EndPanes(manager, window)  # the window's accepted close calls shutdown()
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(ender.on_about_to_quit)
    # Whatever else happens, the interpreter's exit ends every pane too.
    atexit.register(_end_at_exit, weakref.ref(manager))


def follow_folder(manager: PaneManager, folder: str, window: QWidget) -> None:
    """New panes open in `folder`; a folder new to them has its left worktrees offered."""
    path = Path(folder)
    if path != manager.cwd:
        QTimer.singleShot(0, lambda: offer_soon(manager, window))
    manager.cwd = path
