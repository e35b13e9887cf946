"""The window's main conversation in a melgui host: taken when the window attaches (the
one the host kept for the folder, or the one shown, continued there: `take_host_main`)
and followed as the host runs it (`follow_hosted`): the history is the host's, the chat
is drawn again from each snapshot, and what the window cannot do to it yet is said.
"""

from __future__ import annotations

from typing import Any, Protocol

from PySide6.QtCore import SignalInstance
from PySide6.QtWidgets import QLabel

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import Settings
from melgui.core.protocol.messages import Conversation
from melgui.core.store.resume import Resumed
from melgui.core.thread.changes import Change, EntryAdded
from melgui.core.thread.entries import UserEntry
from melgui.host.remote_session import RemoteSession
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.checkpoints.actions import CheckpointActions
from melgui.ui.history import ConversationHistory
from melgui.ui.history.sidebar import HistorySidebar
from melgui.ui.inspector.inspector import Inspector
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.quit_guard import QuitGuard
from melgui.ui.runtime.sessions import MainSession, WindowSessions
from melgui.ui.window.status_line import StatusLine

HOSTED_NOTE = (
    "This conversation runs in the melgui host: it goes on when the window closes with "
    "Keep running in the background, and what it asks (approvals, the preview before a "
    "compaction) waits there for the next window."
)
NOT_MOVED = (
    "This conversation's turn runs in this window; the next conversation runs in the melgui host."
)
NOT_MOVED_THERE = (
    "This conversation goes on in this window; the next one runs in melgui's host on {there}."
)

OWN_LABEL = "Runs in this window's melgui host"
OWN_NOTE = (
    "The conversation, worker panes and terminals run in a melgui host process this "
    "window started for itself (melgui --no-host, or the user's host could not be had). "
    "It ends when the window closes."
)


class Hosting(Protocol):
    """The window's view of a host (view.py's HostView), as its main conversation reads it."""

    @property
    def there(self) -> str: ...  # the machine, for a remote folder's host there

    @property
    def own(self) -> bool: ...  # the window's own host, its child (host_view/private_host.py)


class Window(Protocol):
    """What the main conversation in the host uses of the main window."""

    session: MainSession
    sessions: WindowSessions
    sessionChanged: SignalInstance
    tasks: TaskKeeper
    bridge: SessionBridge
    chat: ChatView
    inspector: Inspector
    status: StatusLine
    history: HistorySidebar
    history_keeper: ConversationHistory
    checkpoint_actions: CheckpointActions

    @property
    def host_view(self) -> Hosting | None: ...

    @property
    def settings(self) -> Settings: ...

    def replace_session(
        self,
        conversation: Conversation,
        failures: tuple[()] = (),
        cid: str | None = None,
        hosted: RemoteSession | None = None,
    ) -> None: ...

    def open_conversation(self, resumed: Resumed) -> None: ...


def take_host_main(window: Window, kept: RemoteSession | None, there: str = "") -> None:
    """The window became a view of the melgui host: its main conversation runs there from
    now on: `kept`, the one the host kept for this folder, or the one shown now, continued
    there (a new one when it has no message yet; a turn running here ends here). The host
    on a remote folder's machine (`there`) has not this machine's history: a conversation
    begun here goes on here."""
    local = window.session
    if isinstance(local, RemoteSession):
        return
    if kept is not None:
        window.replace_session(kept.conversation, hosted=kept)
        window.chat.follow_calls(kept.thread.calls())  # a question waiting: on its card
        kept.ask_again()  # and in the window's queue
        return
    if local.busy or (there and local.conversation.messages):
        said = NOT_MOVED_THERE.format(there=there) if there else NOT_MOVED
        window.status.showMessage(said, 15000)
        return
    if continue_in_place(window, local):
        return
    recording = window.history_keeper.journal.current
    begun = recording is not None and bool(local.conversation.messages)
    cid = recording.conversation_id if recording is not None and begun else None
    window.replace_session(local.conversation, cid=cid)


def continue_in_place(window: Window, local: AgentSession) -> bool:
    """The host continues the conversation shown while nothing is in it yet (the window
    has just opened): the bridge, chat and inspector the window built for it show the
    host's from now on, not built a second time (as a window's start would be, in time
    and in memory: the first ones are kept by the collector's frozen start-up objects).
    False when they hold something of it: the window builds them anew."""
    if window.host_view is None or window.sessions.elsewhere is not None:
        return False  # a remote folder's: its conversation may go on here
    if local.conversation.messages or window.inspector.book.records or window.chat.failures:
        return False
    model, role = local.loop.model, window.settings.role
    hosted = window.sessions.main_or_hosted(local.conversation, None, model=model, role=role)
    window.session = hosted
    window.bridge.follow(hosted)
    window.inspector.book.model = hosted.thread
    window.status.follow(window.bridge)  # its counts and context meter: the host's session
    window.sessionChanged.emit(hosted)  # the parts follow it (the chat hooked already)
    window.tasks.spawn(local.aclose(), what="closing the previous conversation")
    return True


def follow_hosted(window: Window, session: RemoteSession) -> None:
    """A main conversation in the melgui host, shown now: the host records it in the
    history (the sidebar points at it, lists it once it has a message and is read again
    as the person's messages come back and after each turn), its chat is drawn again
    from each snapshot the host sends, and the checkpoints' actions (Rewind, Undo on
    cards, the review bar) ask the host, which took them."""
    window.history_keeper.follow_elsewhere(session.conversation_id)
    window.checkpoint_actions.follow(session, window.chat, window.inspector)
    chat, history = window.chat, window.history

    def took() -> None:
        if session is window.session:
            history.set_current(session.conversation_id or None)
            chat.redraw_history()
            chat.follow_calls(session.thread.calls())

    session.on_snapshot = session.on_whole = took
    window.bridge.busyChanged.connect(lambda busy: None if busy else history.refresh())
    # The host stores the conversation as it opens; the sidebar lists it from its first
    # message, as it comes back from the host (written there or not yet).
    history.said = lambda: session is window.session and bool(session.conversation.messages)
    window.bridge.threadChange.connect(lambda change: _said_again(change, history))
    status = window.status
    if status.findChild(QLabel, "hostedLabel") is None:  # said once, on the status bar
        view = window.host_view
        there = f" on {view.there}" if view is not None and view.there else ""
        own = view is not None and view.own
        label = QLabel(OWN_LABEL if own else f"Runs in the melgui host{there}", status)
        label.setObjectName("hostedLabel")
        label.setToolTip(OWN_NOTE if own else HOSTED_NOTE)
        status.addPermanentWidget(label)


def _said_again(change: Change, history: HistorySidebar) -> None:
    """A message of the person's came back from the host: the list is read again."""
    if isinstance(change, EntryAdded) and isinstance(change.entry, UserEntry):
        history.refresh()


class MainWindow(Window, Protocol):
    """What this module uses of the main window (and what its main conversation in the
    host uses: hosted_main.Window)."""

    guard: QuitGuard
    pane_manager: Any

    def project_folder(self) -> str: ...
