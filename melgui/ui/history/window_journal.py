"""Keeps the window's main conversation in the history, whichever session shows it.

The window replaces its AgentSession for a new conversation, a reopened one or another
folder, and says so with `sessionChanged`. For each session a Journal records its
events and its (redacted) wire log; a new conversation is stored only once its first
message is sent, so opening and closing the window leaves no empty entries behind. A
session replaced mid-turn keeps its journal until that turn has ended (cancelled).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from PySide6.QtCore import QTimer

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.events import WireEntry
from melgui.core.protocol.loop_events import (
    LegStarted,
    LoopEvent,
    MessageAdded,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.store import Store
from melgui.core.store.export import MODEL_NOTE, models_used
from melgui.core.store.journal import Journal
from melgui.ui.history.sidebar import HistorySidebar

WireListen = Callable[[Callable[[WireEntry], None]], Callable[[], None]]
TURN_ENDS = (TurnFinished, TurnFailed, TurnCancelled)


class SessionJournal:
    """The recording of one session (created lazily on its first message)."""

    def __init__(
        self,
        owner: WindowJournal,
        session: AgentSession,
        listen_wire: WireListen | None,
        folder: str,
    ) -> None:
        self.owner = owner
        self.session = session
        self.folder = folder
        self.journal: Journal | None = None
        self.retired = False
        self._models: list[str] | None = None  # the models named in the store, once read
        self._listen_wire = listen_wire
        self._detach: list[Callable[[], None]] = [session.subscribe(self._observe)]

    @property
    def conversation_id(self) -> str | None:
        return self.journal.conversation_id if self.journal else None

    def start(
        self,
        cid: str,
        conversation: Conversation | None,
        stored: Sequence[Message] | None = None,
    ) -> None:
        """Record into `cid`; `stored`: its messages as the store holds them, if known."""
        sidebar = self.owner.sidebar
        self.journal = Journal(
            self.owner.store, cid, conversation, stored=stored, on_problem=sidebar.problem.emit
        )
        self._detach.append(self.journal.follow(self.session.thread))
        if self._listen_wire is not None:
            self._detach.append(self._listen_wire(self.journal.record_wire))

    def create(self, conversation: Conversation | None) -> bool:
        try:
            cid = self.owner.store.create_conversation(
                self.folder, model=self.session.loop.model, role=self.session.loop.role
            )
        except sqlite3.Error as exc:
            self.owner.sidebar.problem.emit(f"History not saved: {exc}.")
            return False
        self.start(cid, conversation)
        return True

    def retire(self) -> None:
        """The window moved on: close now, or when the running turn has ended."""
        self.retired = True
        if not self.session.busy:
            self.close()

    def close(self) -> None:
        for detach in self._detach:
            detach()
        self._detach.clear()
        if self.journal is not None:
            self.journal.close()

    def _observe(self, event: LoopEvent) -> None:
        if self.journal is None:
            if not isinstance(event, MessageAdded) or not self.create(None):
                return
            if not self.retired:
                cid = self.conversation_id
                QTimer.singleShot(0, lambda: self.owner.sidebar.set_current(cid))
        assert self.journal is not None
        self.journal.observe(event)
        if isinstance(event, LegStarted):
            self._note_model()
        if isinstance(event, TURN_ENDS):
            QTimer.singleShot(0, self.owner.sidebar.refresh)
            if self.retired:
                self.close()

    def _note_model(self) -> None:
        """A leg on a model the conversation has not used yet: name it in the store, so
        the export's header lists every model that answered, not only the first."""
        cid, store, model = self.conversation_id, self.owner.store, self.session.loop.model
        if cid is None or not model:
            return
        try:
            if self._models is None:
                summary = store.summary(cid)
                self._models = models_used(summary.model if summary else "", store.notes(cid))
            if model not in self._models:
                store.add_note(cid, MODEL_NOTE, model)
                self._models.append(model)
        except sqlite3.Error as exc:
            self.owner.sidebar.problem.emit(f"History not saved: {exc}.")


class WindowJournal:
    def __init__(self, store: Store, sidebar: HistorySidebar, folder_of: Callable[[], str]) -> None:
        self.store = store
        self.sidebar = sidebar
        self.current: SessionJournal | None = None
        self._folder_of = folder_of
        self._resuming: tuple[str, Conversation, list[Message]] | None = None

    @property
    def journal(self) -> Journal | None:
        return self.current.journal if self.current else None

    def expect(self, cid: str, conversation: Conversation) -> None:
        """The next session shows stored conversation `cid` (being reopened), whose
        messages the store holds just as `conversation` has them now (resumed)."""
        self._resuming = (cid, conversation, list(conversation.messages))

    def follow(self, session: AgentSession, listen_wire: WireListen | None = None) -> None:
        """Record `session` from now on; the previous one finishes its turn on its own."""
        if self.current is not None:
            self.current.retire()
        folder = self._folder_of()
        if self.sidebar.folder != folder:
            self.sidebar.set_folder(folder)
        current = SessionJournal(self, session, listen_wire, folder)
        self.current = current
        resuming, self._resuming = self._resuming, None
        if resuming is not None and resuming[1] is session.conversation:
            current.start(resuming[0], session.conversation, resuming[2])
        elif session.conversation.messages:  # handed a conversation from elsewhere: keep it
            current.create(session.conversation)
        self.sidebar.set_current(current.conversation_id)

    def close(self) -> None:
        """The app quits: write what is buffered and stop recording, once the running
        turn (which the shutdown cancels) has recorded its end: the results of its
        cancelled calls and its partial answer are kept."""
        if self.current is not None:
            self.current.retire()
            self.current = None
