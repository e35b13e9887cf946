"""Putting the history sidebar into the main window with one call.

    sidebar = install_history(window, window, store)

The window is a QMainWindow and a HistoryHost: `project_folder()`,
`open_conversation(resumed)` to show a stored conversation again (chat, inspector with
the calls' records and the repair note, plans), `new_conversation()`, and the pair
`session` / `sessionChanged(session)` (with `bridge.recorder` for the wire log; no
session: nothing to journal yet), through which every main conversation is journaled
(WindowJournal). The sidebar sits in a dock on the left; storage messages go to the
status bar.
"""

from __future__ import annotations

import sqlite3
from typing import Protocol

from PySide6.QtCore import QCoreApplication, Qt, SignalInstance
from PySide6.QtWidgets import QDockWidget, QMainWindow

from melgui.core.agent.session import AgentSession
from melgui.core.store import Store
from melgui.core.store.resume import (
    ConversationNotFoundError,
    Resumed,
    StoredConversation,
    resume,
)
from melgui.desk.recording import WireListen
from melgui.ui.history.reader import ConversationReader
from melgui.ui.history.sidebar import HistorySidebar
from melgui.ui.history.window_journal import WindowJournal
from melgui.ui.runtime.bridge import SessionBridge


class HistoryHost(Protocol):
    """What the history sidebar needs of the window it sits in (MainWindow is one)."""

    sessionChanged: SignalInstance  # the new main AgentSession

    @property
    def session(self) -> AgentSession | None: ...

    @property
    def bridge(self) -> SessionBridge | None: ...

    def project_folder(self) -> str: ...

    def open_conversation(self, resumed: Resumed) -> None:
        """Replace the window's session by one continuing `resumed.conversation`; show its
        messages, its calls (resumed.tool_calls), plans and `resumed.describe()`."""

    def new_conversation(self) -> None: ...


def install_history(window: QMainWindow, host: HistoryHost, store: Store) -> HistorySidebar:
    """Add the history sidebar to `window` (the host as a Qt window) in a left dock and wire
    it to `host`; returns it."""
    sidebar = HistorySidebar(store, host.project_folder(), window)
    dock = QDockWidget("History", window)
    dock.setObjectName("historyDock")
    dock.setWidget(sidebar)
    window.addDockWidget(Qt.DockWidgetArea.LeftDockWidgetArea, dock)
    status = window.statusBar()
    sidebar.problem.connect(lambda text: status.showMessage(text, 15000))
    if store.notice:
        status.showMessage(store.notice)

    keeper = WindowJournal(store, sidebar, host.project_folder)
    if host.session is not None:
        keeper.follow(host.session, _wire_listener(host))
    host.sessionChanged.connect(lambda new: keeper.follow(new, _wire_listener(host)))
    app = QCoreApplication.instance()
    if app is not None:
        app.aboutToQuit.connect(keeper.close)

    reader = ConversationReader(sidebar)
    wanted: list[str] = []  # the conversation last asked for (a later click wins)

    def show(cid: str, stored: StoredConversation | None) -> None:
        resumed = open_resumed(store, cid, sidebar, stored)
        if resumed is not None:
            keeper.expect(cid, resumed.conversation, resumed.tool_calls)
            host.open_conversation(resumed)

    def open_stored(cid: str) -> None:
        if store.path is None:  # in memory: nothing another thread could read
            show(cid, None)
            return
        wanted[:] = [cid]
        reader.read(store.path, cid)  # messages, calls, plans, notes: read in a worker thread

    def read(cid: str, result: object) -> None:
        if wanted != [cid]:
            return
        wanted.clear()
        if isinstance(result, ConversationNotFoundError):
            show(cid, None)  # says so, as a read on this thread would
        elif isinstance(result, sqlite3.Error):
            sidebar.problem.emit(f"History: cannot open the conversation: {result}")
        elif isinstance(result, BaseException):
            raise result
        elif isinstance(result, StoredConversation):
            show(cid, result)

    # Queued even when the read is done at once: a click after it must still win.
    reader.finished.connect(read, Qt.ConnectionType.QueuedConnection)

    sidebar.conversationOpened.connect(open_stored)
    sidebar.newConversationRequested.connect(host.new_conversation)
    return sidebar


def _wire_listener(host: HistoryHost) -> WireListen | None:
    """The window's in-memory wire log (already redacted), if it has one to listen to."""
    return host.bridge.recorder.listen if host.bridge is not None else None


def open_resumed(
    store: Store, cid: str, sidebar: HistorySidebar, stored: StoredConversation | None = None
) -> Resumed | None:
    """Resume `cid` for showing (`stored`: what was already read of it); trouble becomes
    the sidebar's `problem`."""
    try:
        resumed = resume(store, cid, stored)
    except ConversationNotFoundError:
        sidebar.problem.emit("History: that conversation is no longer stored.")
        sidebar.refresh()
        return None
    except sqlite3.Error as exc:
        sidebar.problem.emit(f"History: cannot open the conversation: {exc}")
        return None
    sidebar.set_current(cid)
    return resumed
