"""Keeps the window's main conversation in the history, whichever session shows it.

The window replaces its AgentSession for a new conversation, a reopened one or another
folder, and says so with `sessionChanged`. Each session gets the desk's Recording (which
stores a new conversation only once its first message is sent, and lets a session
replaced mid-turn finish that turn); what is left here is the sidebar: it is pointed at
the conversation being recorded and refreshed when a turn ends, on Qt's next turn.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from PySide6.QtCore import QTimer

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.protocol.transport import WireListen
from melgui.core.store import Store
from melgui.core.store.journal import Journal
from melgui.core.store.records import ToolCallRecord
from melgui.desk.recording import Recording
from melgui.ui.history.sidebar import HistorySidebar

# A conversation being reopened: its id, its resumed messages (and a copy), its calls.
Resuming = tuple[str, Conversation, list[Message], Sequence[ToolCallRecord]]


class WindowJournal:
    def __init__(self, store: Store, sidebar: HistorySidebar, folder_of: Callable[[], str]) -> None:
        self.store = store
        self.sidebar = sidebar
        self.current: Recording | None = None
        self._folder_of = folder_of
        self._resuming: Resuming | None = None

    @property
    def journal(self) -> Journal | None:
        return self.current.journal if self.current else None

    def expect(
        self, cid: str, conversation: Conversation, calls: Sequence[ToolCallRecord] = ()
    ) -> None:
        """The next session shows stored conversation `cid` (being reopened), whose
        messages the store holds just as `conversation` has them now (resumed), and whose
        calls are `calls`."""
        self._resuming = (cid, conversation, list(conversation.messages), calls)

    def follow(self, session: AgentSession, listen_wire: WireListen | None = None) -> None:
        """Record `session` from now on; the previous one finishes its turn on its own."""
        if self.current is not None:
            self.current.retire()
        folder = self._folder_of()
        sidebar = self.sidebar
        if sidebar.folder != folder:
            sidebar.set_folder(folder)
        current = Recording(
            self.store,
            folder,
            on_problem=sidebar.problem.emit,
            on_stored=lambda cid: QTimer.singleShot(0, lambda: sidebar.set_current(cid)),
            on_turn_end=lambda: QTimer.singleShot(0, sidebar.refresh),
            name_models=True,
        )
        self.current = current
        current.attach(session, listen_wire)
        resuming, self._resuming = self._resuming, None
        if resuming is not None and resuming[1] is session.conversation:
            current.start(resuming[0], session.conversation, resuming[2], resuming[3])
        elif session.conversation.messages:  # handed a conversation from elsewhere: keep it
            current.create(session.conversation, model=session.loop.model, role=session.loop.role)
        sidebar.set_current(current.conversation_id)

    def follow_elsewhere(self, conversation_id: str) -> None:
        """The main conversation shown now is recorded by the melgui host, which runs it:
        nothing is recorded here; the sidebar points at it (once its id is known)."""
        if self.current is not None:
            self.current.retire()
            self.current = None
        self._resuming = None
        folder = self._folder_of()
        if self.sidebar.folder != folder:
            self.sidebar.set_folder(folder)
        # None until the host says its id: the one shown before is not current any more
        # (picked in the sidebar, it opens again).
        self.sidebar.set_current(conversation_id or None)

    def close(self) -> None:
        """The app quits: write what is buffered and stop recording, once the running
        turn (which the shutdown cancels) has recorded its end: the results of its
        cancelled calls and its partial answer are kept."""
        if self.current is not None:
            self.current.retire()
            self.current = None
