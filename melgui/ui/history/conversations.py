"""ConversationHistory: the history sidebar and what stands behind it.

    history = ConversationHistory(store, folder, open_conversation, new_conversation)
    history.follow(session, recorder.listen)     # each main conversation shown
    dock.setWidget(history.sidebar)              # where it sits is the window's

Each main conversation the window shows is recorded (WindowJournal). A stored one the
person picks is read in a worker thread (messages, calls, plans, notes), resumed and
handed to `open_conversation`, which shows it again (chat, inspector with the calls'
records and the repair note, plans); a later click wins over a read still running.
Storage trouble is the sidebar's `problem` signal, in one line.

A remote folder whose main conversation runs in melgui's host there lists that host's
conversations too (`list_there`); one of them picked is continued in the host there
(`open_there`), which has it: this machine's store has not.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from PySide6.QtCore import QCoreApplication, QObject, Qt, QTimer
from PySide6.QtWidgets import QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.transport import WireListen
from melgui.core.store import Store, ToolCallRecord
from melgui.core.store.resume import (
    ConversationNotFoundError,
    Resumed,
    StoredConversation,
    resume,
)
from melgui.ui.history.reader import ConversationReader
from melgui.ui.history.sidebar import HistorySidebar
from melgui.ui.history.there import ThereListing
from melgui.ui.history.window_journal import WindowJournal


class ConversationHistory(QObject):
    def __init__(
        self,
        store: Store,
        folder: Callable[[], str],
        open_conversation: Callable[[Resumed], None],
        new_conversation: Callable[[], None],
        parent: QWidget | None = None,
        load_calls: Callable[[list[ToolCallRecord]], None] | None = None,
    ) -> None:
        super().__init__(parent)
        self.store = store
        self.sidebar = HistorySidebar(store, folder(), parent)
        self.journal = WindowJournal(store, self.sidebar, folder)
        self._open_conversation = open_conversation
        self._load_calls = load_calls
        self._calls_of: str | None = None  # the one shown, whose call records are to come
        app = QCoreApplication.instance()
        if app is not None:
            app.aboutToQuit.connect(self.journal.close)
        self._reader = ConversationReader(self.sidebar)
        self._wanted: list[str] = []  # the conversation last asked for (a later click wins)
        self._open_there: Callable[[str], None] | None = None
        # Queued even when the read is done at once: a click after it must still win.
        self._reader.finished.connect(self._read, Qt.ConnectionType.QueuedConnection)
        self._reader.callsRead.connect(self._calls_read, Qt.ConnectionType.QueuedConnection)
        self.sidebar.conversationOpened.connect(self._open_stored)
        self.sidebar.newConversationRequested.connect(new_conversation)

    def close(self) -> None:
        """The window closes: recording stops, then the store closes, which removes this
        process's writer lease (so the next start skips the history's integrity check)."""
        self.journal.close()
        self.store.close()

    @property
    def reading_calls(self) -> bool:
        """The conversation shown was reopened and its call records are still to come."""
        return self._calls_of is not None

    def follow(self, session: AgentSession, listen_wire: WireListen | None = None) -> None:
        """Record `session` (the main conversation shown now) and the wire lines
        `listen_wire` hands over; the one before finishes its turn on its own."""
        self._calls_of = None
        self.journal.follow(session, listen_wire)

    def follow_elsewhere(self, conversation_id: str) -> None:
        """The main conversation shown now runs (and is recorded) in the melgui host."""
        self._calls_of = None
        self.journal.follow_elsewhere(conversation_id)

    def list_there(
        self, there: ThereListing | None, open_there: Callable[[str], None] | None = None
    ) -> None:
        """The sidebar lists the host there's conversations too (`there`; None: no
        more), and `open_there(cid)` continues one picked in that host."""
        self._open_there = open_there if there is not None else None
        self.sidebar.list_there(there)

    def _show(self, cid: str, stored: StoredConversation | None) -> None:
        resumed = open_resumed(self.store, cid, self.sidebar, stored)
        if resumed is not None:
            self.journal.expect(cid, resumed.conversation, resumed.tool_calls)
            self._open_conversation(resumed)
            if resumed.calls_later:
                # Every call's record (the inspector's labels) once the chat has painted:
                # 4,000 of them in a 10,000-message conversation.
                self._calls_of = cid
                QTimer.singleShot(0, self._reader, lambda: self._read_calls(cid))

    def _read_calls(self, cid: str) -> None:
        if self._calls_of == cid and self.store.path is not None:
            self._reader.read_calls(self.store.path, cid)

    def _calls_read(self, cid: str, result: object) -> None:
        if self._calls_of != cid:
            return  # another conversation is shown since
        self._calls_of = None
        if isinstance(result, sqlite3.Error):
            self.sidebar.problem.emit(f"History: cannot read the conversation's calls: {result}")
        elif isinstance(result, BaseException):
            raise result
        elif isinstance(result, list) and self._load_calls is not None:
            self._load_calls(result)

    def _open_stored(self, cid: str) -> None:
        self._calls_of = None
        if self._open_there is not None and self.sidebar.lives_there(cid):
            self._wanted.clear()  # a read of this machine's still coming is not shown
            self._open_there(cid)
            return
        if self.store.path is None:  # in memory: nothing another thread could read
            self._show(cid, None)
            return
        self._wanted[:] = [cid]
        self._reader.read(self.store.path, cid)

    def _read(self, cid: str, result: object) -> None:
        if self._wanted != [cid]:
            return
        self._wanted.clear()
        if isinstance(result, ConversationNotFoundError):
            self._show(cid, None)  # says so, as a read on this thread would
        elif isinstance(result, sqlite3.Error):
            self.sidebar.problem.emit(f"History: cannot open the conversation: {result}")
        elif isinstance(result, BaseException):
            raise result
        elif isinstance(result, StoredConversation):
            self._show(cid, result)


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
