"""Remote folders and hosts in the window, hooked in with one call:
`window.remote = install_remote(window)`.

- Settings.hosts become places workers and terminals can run on (`@NAME` in a worker's
  task, New worker…'s choice, list_panes' `where`), each reached by one link;
- `open_folder(url)` makes the window a remote folder's: its chat's workspace tools, its
  terminals and its workers run there, the loop and the key stay here;
- the links' state shows in the status bar, ssh's questions in dialogs, and File gets
  Open remote folder… (a window of its own per folder; recent ones remembered).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
from collections.abc import Callable
from typing import Protocol

from PySide6.QtGui import QAction
from PySide6.QtWidgets import QMainWindow, QMenu, QStatusBar

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import RemoteHost, Settings, data_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.tooling import ToolRunner
from melgui.desk.desk import Desk
from melgui.remote.askpass import Question
from melgui.remote.connect import given_host_argv
from melgui.remote.hosts import Place, RemoteHosts
from melgui.remote.link import LinkError
from melgui.remote.remote_tools import PendingRemoteTools, RemoteTools
from melgui.remote.target import parse_folder
from melgui.ui.panes.manager import PaneManager, WorkerFactory, WorkerSpec
from melgui.ui.panes.remote.ask_dialog import ask_in_window
from melgui.ui.panes.remote.folder_dialog import (
    RemoteFolderDialog,
    open_in_new_window,
    recent_folders,
    remember_folder,
)
from melgui.ui.panes.remote.link_state import LinkState

Elsewhere = Callable[[], tuple[ToolRunner, str]]  # a session's tools and its folder there


class _Toolbar(Protocol):
    def set_folder(self, folder: str) -> None: ...


class RemoteWindow(Protocol):
    """What remote folders and hosts use of the window (MainWindow is one)."""

    pane_manager: PaneManager
    actions_by_name: dict[str, QAction]
    elsewhere: Elsewhere | None

    @property
    def main_window(self) -> QMainWindow: ...

    @property
    def toolbar(self) -> _Toolbar: ...

    @property
    def status(self) -> QStatusBar: ...

    @property
    def desk(self) -> Desk: ...

    @property
    def settings(self) -> Settings: ...

    @property
    def session(self) -> AgentSession: ...

    def new_conversation(self) -> None: ...

    def setWindowTitle(self, title: str) -> None: ...


def stand_in_for(url: str) -> str:
    """The local folder a remote folder's window keeps its own things in (history, rules):
    melgui's, under its data folder, one per URL."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", url.removeprefix("ssh://"))[:60]
    digest = hashlib.sha256(url.encode()).hexdigest()[:8]
    folder = data_dir() / "remote-folders" / f"{name}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    trust = FolderTrust()
    if not trust.asked(str(folder)):  # melgui's own empty folder: nothing in it runs
        trust.set(str(folder), True)
    return str(folder)


class RemoteSide:
    """The window's hosts (RemotePlaces for its panes) and its remote folder, if any."""

    def __init__(self, window: RemoteWindow) -> None:
        self.window = window
        self.indicator = LinkState(window.status)
        window.status.addPermanentWidget(self.indicator)
        self.hosts = RemoteHosts(
            list(window.settings.hosts),
            ask=self._ask,
            on_state=self.indicator.show_state,
            host_argv=given_host_argv(),
        )
        self.folder: asyncio.Future[Place] | None = None
        self.url = ""

    # -- RemotePlaces (melgui/ui/panes/manager.py) --------------------------------------

    def names(self) -> list[str]:
        return self.hosts.names()

    def describe(self) -> str:
        return self.hosts.describe()

    async def place(self, name: str) -> Place:
        return await self.hosts.place(name)

    def worker_factory(self, place: Place) -> WorkerFactory:
        desk = self.window.desk

        def make(spec: WorkerSpec) -> AgentSession:
            return desk.worker_session(
                model=spec.model or self.window.session.loop.model,
                source=spec.source,
                tools=RemoteTools(place.link, place.folder, options=place.options),
                cwd=place.folder,
            )

        return make

    # -- a remote folder -----------------------------------------------------------------

    def open_folder(self, url: str) -> None:
        """This window is `url`'s: its chat's workspace tools, terminals and workers run
        there from now on (the link connects in the background; calls made before wait)."""
        target = parse_folder(url)
        name = target.label
        self.url = url
        self.hosts.add(RemoteHost(name=name, target=url))
        self.indicator.show_state(name, "connecting")
        folder = asyncio.ensure_future(self.hosts.place(name))
        self.folder = folder
        folder.add_done_callback(self._reached)
        window = self.window
        window.pane_manager.home = name
        window.elsewhere = lambda: (
            PendingRemoteTools(folder, local=window.desk.tools),
            target.path,
        )
        window.new_conversation()  # the chat's session now uses them
        window.setWindowTitle(f"melgui — {url}")
        window.toolbar.set_folder(url)

    def _reached(self, folder: asyncio.Future[Place]) -> None:
        if folder.cancelled():
            return
        error = folder.exception()
        name = parse_folder(self.url).label
        if error is None:
            remember_folder(self.url)
            return
        self.indicator.show_state(name, "lost")
        why = str(error) if isinstance(error, LinkError) else repr(error)
        self.window.status.showMessage(f"Cannot open {self.url}: {why}", 60000)

    # -- the person ----------------------------------------------------------------------

    async def _ask(self, question: Question) -> str | None:
        return await ask_in_window(self.window.main_window, question)

    def ask_folder(self) -> RemoteFolderDialog:
        dialog = RemoteFolderDialog(recent_folders(), open_in_new_window, self.window.main_window)
        dialog.open()
        return dialog

    async def aclose(self) -> None:
        if self.folder is not None and not self.folder.done():
            self.folder.cancel()
        await self.hosts.aclose()


def install_remote(window: RemoteWindow) -> RemoteSide:
    side = RemoteSide(window)
    window.pane_manager.remote = side
    action = QAction("Open &remote folder…", window.main_window)
    action.setObjectName("action_open_remote_folder")
    action.setStatusTip("A folder on another machine over ssh, in a window of its own")
    action.triggered.connect(lambda _checked=False: side.ask_folder())
    window.actions_by_name["open_remote_folder"] = action
    file_menu = window.main_window.menuBar().findChild(QMenu, "menuFile")
    if file_menu is not None:
        after = window.actions_by_name.get("open_folder")
        actions = file_menu.actions()
        index = actions.index(after) + 1 if after in actions else 0
        if index < len(actions):
            file_menu.insertAction(actions[index], action)
        else:
            file_menu.addAction(action)
    return side
