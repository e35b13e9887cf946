"""Keeps the window's main conversation in the history, whichever session shows it.

The window replaces its AgentSession for a new conversation, a reopened one or another
folder, and says so with `sessionChanged`. For each session a Journal records its
events and its (redacted) wire log; a new conversation is stored only once its first
message is sent, so opening and closing the window leaves no empty entries behind.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable

from PySide6.QtCore import QTimer

from melgui.core.events import WireEntry
from melgui.core.loop_events import LoopEvent, MessageAdded, TurnCancelled, TurnFailed, TurnFinished
from melgui.core.messages import Conversation
from melgui.core.session import AgentSession
from melgui.core.store import Store
from melgui.core.store.journal import Journal
from melgui.ui.history.sidebar import HistorySidebar

WireListen = Callable[[Callable[[WireEntry], None]], Callable[[], None]]


class WindowJournal:
    def __init__(self, store: Store, sidebar: HistorySidebar, folder_of: Callable[[], str]) -> None:
        self.store = store
        self.sidebar = sidebar
        self.journal: Journal | None = None
        self._folder_of = folder_of
        self._session: AgentSession | None = None
        self._listen_wire: WireListen | None = None
        self._detach: list[Callable[[], None]] = []
        self._resuming: tuple[str, Conversation] | None = None

    def expect(self, cid: str, conversation: Conversation) -> None:
        """The next session shows stored conversation `cid` (being reopened)."""
        self._resuming = (cid, conversation)

    def follow(self, session: AgentSession, listen_wire: WireListen | None = None) -> None:
        """Record `session` from now on (the previous one is flushed and let go)."""
        self.close()
        folder = self._folder_of()
        if self.sidebar.folder != folder:
            self.sidebar.set_folder(folder)
        self._session = session
        self._listen_wire = listen_wire
        resuming, self._resuming = self._resuming, None
        if resuming is not None and resuming[1] is session.conversation:
            self._start(resuming[0], session.conversation)
        elif session.conversation.messages:  # handed a conversation from elsewhere: keep it
            self._create(session, session.conversation)
        self.sidebar.set_current(self.journal.conversation_id if self.journal else None)
        self._detach.append(session.subscribe(self._observe))

    def close(self) -> None:
        """Write what is buffered and stop recording."""
        for detach in self._detach:
            detach()
        self._detach.clear()
        if self.journal is not None:
            self.journal.close()
        self.journal = None
        self._session = None

    def _observe(self, event: LoopEvent) -> None:
        if self.journal is None:
            if not isinstance(event, MessageAdded) or self._session is None:
                return
            if not self._create(self._session, None):
                return
            cid = self.journal.conversation_id if self.journal else None
            QTimer.singleShot(0, lambda: self.sidebar.set_current(cid))
        assert self.journal is not None
        self.journal.observe(event)
        if isinstance(event, TurnFinished | TurnFailed | TurnCancelled):
            QTimer.singleShot(0, self.sidebar.refresh)

    def _create(self, session: AgentSession, conversation: Conversation | None) -> bool:
        try:
            cid = self.store.create_conversation(
                self._folder_of(), model=session.loop.model, role=session.loop.role
            )
        except sqlite3.Error as exc:
            self.sidebar.problem.emit(f"History not saved: {exc}.")
            return False
        self._start(cid, conversation)
        return True

    def _start(self, cid: str, conversation: Conversation | None) -> None:
        self.journal = Journal(self.store, cid, conversation, on_problem=self.sidebar.problem.emit)
        if self._listen_wire is not None:
            self._detach.append(self._listen_wire(self.journal.record_wire))
