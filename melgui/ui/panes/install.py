"""Puts panes into the main window: the area beside the chat, the panes that run the
pane tools (given to the window's desk), workers from its session factory, and the end of
every pane when the window closes or the app quits. One call: `install_panes(window, window)`.
"""

from __future__ import annotations

import atexit
import contextlib
import weakref
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QTimer, SignalInstance
from PySide6.QtWidgets import QApplication, QSplitter, QWidget

from melgui.core.agent.session import AgentSession, ChatSession
from melgui.core.protocol.catalog import Role
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import WorkerWorktrees
from melgui.desk.desk import Desk
from melgui.ui.panes.manager import PaneManager, WorkerSpec
from melgui.ui.panes.orchestration import Orchestration
from melgui.ui.panes.pane_area import PaneArea
from melgui.ui.panes.worktree_recovery import offer_soon
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.theme import Colors


class PaneHost(Protocol):
    """What the panes need of the window they live in (MainWindow is one)."""

    pane_host: QSplitter
    colors: Colors
    sessionChanged: SignalInstance
    approvalSourceRequested: SignalInstance
    themeChanged: SignalInstance

    @property
    def desk(self) -> Desk: ...

    def project_folder(self) -> str: ...

    def session_factory(
        self,
        role: Role,
        model: str | None = None,
        source: str = "worker",
        worktree: Worktree | None = None,
    ) -> AgentSession: ...

    def bridge_for(self, session: ChatSession) -> SessionBridge: ...

    def width(self) -> int: ...

    def isVisible(self) -> bool: ...

    def installEventFilter(self, watcher: QObject) -> None: ...


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


def install_panes(window: PaneHost, widget: QWidget) -> PaneManager:
    """Add the pane area to `window.pane_host`; its panes run the desk's seven pane tools.

    `widget` is the window itself as a Qt widget: panes are its children and end with it.
    """
    area = PaneArea()
    area.hide()  # shown with its first pane, so the chat has the room until then
    window.pane_host.addWidget(area)

    def make_worker(spec: WorkerSpec) -> AgentSession:
        return window.session_factory("worker", spec.model, spec.source, spec.worktree)

    def worktrees() -> WorkerWorktrees | None:
        return window.desk.worktrees

    manager = PaneManager(
        area,
        window.project_folder(),
        worker_factory=make_worker,
        bridge_factory=window.bridge_for,  # its approvals also reach window.approvals
        colors=window.colors,
        worktrees=worktrees,
        parent=widget,
    )
    window.desk.panes = Orchestration(manager)

    def on_panes_changed() -> None:
        has_panes = bool(manager.registry.all())
        if has_panes and area.isHidden():
            area.show()  # the window's LayoutKeeper shares the width out
        elif not has_panes and not area.isHidden():
            area.hide()

    def on_session_changed(_session: object) -> None:
        folder = Path(window.project_folder())
        if folder != manager.cwd:
            QTimer.singleShot(0, lambda: offer_soon(manager, widget))
        manager.cwd = folder  # new panes open in the new folder

    manager.panesChanged.connect(on_panes_changed)
    window.sessionChanged.connect(on_session_changed)
    window.approvalSourceRequested.connect(manager.show_call)
    window.themeChanged.connect(manager.set_colors)
    # Worktrees an earlier run left (a crash, a quit with work in them): offered once the
    # window shows.
    QTimer.singleShot(0, lambda: offer_soon(manager, widget))
    ender = _EndPanes(manager, widget)  # the window's accepted close calls shutdown()
    app = QApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(ender.on_about_to_quit)
    # Whatever else happens, the interpreter's exit ends every pane too.
    atexit.register(_end_at_exit, weakref.ref(manager))
    return manager
