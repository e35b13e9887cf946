"""The end of the melgui host a window views (killed, crashed): said once, then a new
host takes each conversation over from the journal (`take_over`). When no new user's host
can start, the window starts a host of its own (`go_private`, host_view/private_host.py) and the
main conversation goes on there, from the history, marked in the dead host's journal as
the window's, so that no host started later reopens it too. A window's own host that ends
is followed by a new one of its own, on the same journal. Only when no host at all can
start does the main conversation go on in the window itself (`fall_back`).
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Awaitable, Callable
from typing import Protocol

from PySide6.QtWidgets import QLabel

from melgui.core.protocol.messages import Conversation
from melgui.host import change_journal
from melgui.host.client import HostClient, HostGone, VersionRefused
from melgui.host.place import PlaceError
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from melgui.remote.link_client import LinkClient
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.history.conversations import open_resumed
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.host_view.main_conversation import OWN_LABEL, OWN_NOTE, MainWindow
from melgui.ui.window.host_view.private_host import PrivateHost

# The host's end (`say_ended`, `take_over`): a new host takes the conversations over.
HOST_ENDED = (
    "The melgui host stopped unexpectedly: the turns it ran were cut off and the programs "
    "they ran ended with it. Starting a new host; the conversations reopen from the journal."
)
# Said in a conversation's chat until the new host's copy is drawn.
CUT = (
    "The melgui host stopped unexpectedly: this conversation's turn was cut off and the "
    "programs it ran ended with the host. It reopens in a new host from the journal; what "
    "was being written is lost."
)
IDLE = (
    "The melgui host stopped unexpectedly. This conversation reopens in a new host from "
    "the journal."
)
# A pane's header, for a turn that ran.
TURN_ENDED = "its turn ended with the melgui host, and the programs it ran too"
# Said after the new host's copy is drawn, for a conversation with no turn cut (the host
# says its own words of a cut one).
REOPENED = (
    "The melgui host stopped unexpectedly; this conversation reopened in a new host from "
    "the journal."
)
NOT_REOPENED = (
    "The melgui host stopped unexpectedly and the new host did not reopen this "
    "conversation (it was not in its journal). Its conversation is kept in the history."
)
NO_NEW_HOST = "No melgui host could start: the conversation goes on in this window."
# A window's own host (host_view/private_host.py): the status line and the chat say so.
OWN_ATTACHED = "This window's melgui host runs"
OWN_STARTED = (
    "This window's agents run in a melgui host of its own, which ends when the window closes "
    "(nothing keeps running in the background)."
)
OWN_ENDED = (
    "This window's melgui host stopped unexpectedly: the turns it ran were cut off and the "
    "programs they ran ended with it. Starting a new one; the conversations reopen from its "
    "journal."
)
NO_NEW_SHARED = (
    "The melgui host stopped unexpectedly and no new one could start ({why}). This window "
    "started a melgui host of its own: the conversation goes on there, and it ends when the "
    "window closes."
)
NO_NEW_SHARED_NOTE = (
    "The melgui host stopped unexpectedly and no new one could start ({why}). This "
    "conversation goes on in a melgui host this window started for itself, reopened from "
    "the history: the programs its turn ran ended with the host, as did the worker panes' "
    "agents."
)
NO_NEW_HOST_NOTE = (
    "The melgui host stopped unexpectedly and no new host could start ({why}). This "
    "conversation goes on in this window, reopened from the history: the programs its turn "
    "ran ended with the host, as did the worker panes' agents."
)
WORKER_KEPT = (
    "No new melgui host could start: this worker ended with the host. Its conversation is "
    "kept in the history."
)
OWN_NEW = "A new melgui host of this window's own"
# Starts a new host, or attaches to the one another view started (the window's is
# HostClient.attach_or_start's).
HostStarter = Callable[[], Awaitable[HostClient]]


class Successor(Protocol):
    """What the host's end uses of the window's HostView (view.py)."""

    @property
    def client(self) -> HostClient | LinkClient: ...

    @property
    def sessions(self) -> weakref.WeakSet[RemoteSession]: ...

    @property
    def start_host(self) -> HostStarter: ...

    def took_over(self, client: HostClient) -> None: ...

    def went_private(self, private: PrivateHost, client: HostClient) -> None: ...

    @property
    def own(self) -> bool: ...

    def let_go(self) -> None: ...


def say_ended(
    window: MainWindow, viewed: list[RemoteSession], *, own: bool = False
) -> list[RemoteSession]:
    """The host ended (`own`: the window's own): said on the status bar, and in each
    conversation it ran for this window (its turn, if one ran, ends; its questions go);
    returns them."""
    window.status.showMessage(OWN_ENDED if own else HOST_ENDED)
    for session in viewed:
        ran = session.busy or bool(session.loop.pending_approvals())
        session.host_ended(CUT if ran else IDLE, TURN_ENDED)
    return viewed


async def take_over(
    window: MainWindow, view: Successor, ended: HostClient, viewed: list[RemoteSession]
) -> None:
    """Start a new host (or attach to the one another view started) and go on there with
    each conversation viewed here; with none, the main conversation goes on here."""
    try:
        client = await view.start_host()
    except (OSError, VersionRefused, PlaceError) as exc:
        await ended.aclose()
        if view.client is not ended:
            return
        if not view.own and not window.pane_manager.closed:
            await go_private(window, view, ended, viewed, str(exc))
        else:
            fall_back(window, view, viewed, str(exc))
        return
    await ended.aclose()
    if window.pane_manager.closed or view.client is not ended:
        await client.aclose()  # the window closed meanwhile: the host ends when idle
        return
    view.took_over(client)
    try:
        there = {s["id"] for s in await client.call("session/list")}
        reopened = [await _rejoin(window, view, session, there) for session in viewed]
    except (HostGone, OSError, RpcError):
        return  # that host ended too: its own end is said, and handled, the same way
    said = _reopened_message(reopened)
    window.status.showMessage(said.replace("A new melgui host", OWN_NEW) if view.own else said)


async def _rejoin(
    window: MainWindow, view: Successor, session: RemoteSession, there: set[str]
) -> str:
    """`session` goes on in the new host: "main", "worker", or "" when it could not."""
    main = session is window.session
    if session.session_id not in there:
        if not main:
            session.end(NOT_REOPENED)
            return ""
        # The history's conversation (repaired as it is read), continued in the new host.
        window.replace_session(session.conversation, cid=session.conversation_id or None)
        return "main"
    said = await session.rejoin(view.client)
    view.sessions.add(session)
    chat = window.chat if main else _chat_of(window, session)
    if chat is not None:  # drawn again from the new host's copy (the main one already is)
        if not main:
            chat.redraw_history()
            chat.follow_calls(session.thread.calls())
        chat.transcript.add_notice(said or REOPENED, chat.colors.warn)
    return "main" if main else "worker"


async def go_private(
    window: MainWindow, view: Successor, ended: HostClient, viewed: list[RemoteSession], why: str
) -> None:
    """The user's host ended and no new one starts: a host of the window's own goes on
    with the main conversation, from the history; its workers end here, as with no host.
    With none either, the window runs it itself (`fall_back`)."""
    private: PrivateHost | None = None
    try:
        private = PrivateHost()
        client = await private.start()
    except OSError as exc:
        if private is not None:
            await private.end()  # its lock and journal go
        fall_back(window, view, viewed, f"{why}; nor one of this window's own: {exc}")
        return
    if window.pane_manager.closed or view.client is not ended:
        await private.end()  # the window closed meanwhile
        return
    view.went_private(private, client)
    window.status.showMessage(NO_NEW_SHARED.format(why=why))
    main = window.session
    for session in viewed:
        if session is not main:
            session.end(WORKER_KEPT)
    if not isinstance(main, RemoteSession) or main not in viewed:
        return  # a turn that ran here (NOT_MOVED) goes on here
    if main.session_id:  # no user's host started later reopens it: it runs on here
        what = "marking the conversation as the window's in the host's journal"
        window.tasks.spawn(mark_taken(main.session_id), what=what)
    # The history's conversation (repaired as it is read), continued in the window's host.
    window.replace_session(main.conversation, cid=main.conversation_id or None)
    said_after(window, NO_NEW_SHARED_NOTE.format(why=why))


def said_after(window: MainWindow, notice: str) -> None:
    """`notice` in the main conversation's chat once it is drawn from its first snapshot
    (drawing it clears the chat)."""
    session = window.session
    if not isinstance(session, RemoteSession):
        return
    drawn = session.on_snapshot

    def say() -> None:
        session.on_snapshot = drawn
        if drawn is not None:
            drawn()
        window.chat.transcript.add_notice(notice, window.chat.colors.warn)

    session.on_snapshot = say


def say_own(window: MainWindow) -> None:
    """The status bar says the host is the window's own."""
    label = window.status.findChild(QLabel, "hostedLabel")
    if isinstance(label, QLabel):
        label.setText(OWN_LABEL)
        label.setToolTip(OWN_NOTE)


def fall_back(window: MainWindow, view: Successor, viewed: list[RemoteSession], why: str) -> None:
    """No new host: the main conversation goes on in this window, from the history (where
    the host recorded it), and new workers run here too."""
    view.let_go()
    label = window.status.findChild(QLabel, "hostedLabel")
    if label is not None:  # nothing runs in the melgui host any more
        window.status.removeWidget(label)
        label.deleteLater()
    window.status.showMessage(NO_NEW_HOST)
    main = window.session
    for session in viewed:
        if session is not main:
            session.end(WORKER_KEPT)
    if not isinstance(main, RemoteSession):  # a turn that ran here (NOT_MOVED) goes on
        return
    if main.session_id:
        what = "marking the conversation as the window's in the host's journal"
        window.tasks.spawn(mark_taken(main.session_id), what=what)
    history = window.history_keeper
    cid = main.conversation_id
    resumed = open_resumed(history.store, cid, window.history) if cid else None
    if resumed is None:  # not recorded yet: what the window holds, made valid
        conversation = Conversation(list(main.conversation.messages))
        conversation.repair_pairing()
        window.replace_session(conversation)
    else:
        history.journal.expect(cid, resumed.conversation, resumed.tool_calls)
        window.open_conversation(resumed)
    window.chat.transcript.add_notice(NO_NEW_HOST_NOTE.format(why=why), window.chat.colors.warn)


async def mark_taken(session_id: str) -> bool:
    """The dead host's journal says this window took `session_id` over: a host started
    later (by `melgui FOLDER`, another window) does not reopen it while this window
    runs it. False when the journal had it closed or taken already."""
    by = f"window {os.getpid()}"
    taken = await asyncio.to_thread(change_journal.take_over, [session_id], by)
    return bool(taken)


def _chat_of(window: MainWindow, session: RemoteSession) -> ChatView | None:
    """The chat of the worker pane that shows `session`."""
    for _, pane in window.pane_manager.panes():
        if isinstance(pane, AgentPane) and pane.session is session:
            return pane.chat
    return None


def _reopened_message(reopened: list[str]) -> str:
    """What the new host took over, in one line."""
    parts = []
    if "main" in reopened:
        parts.append("the main conversation")
    workers = reopened.count("worker")
    if workers:
        parts.append(f"{workers} worker{'s' if workers > 1 else ''}")
    said = " and ".join(parts) or "no conversation"
    text = f"A new melgui host runs: {said} reopened from the journal."
    lost = reopened.count("")
    if lost:
        text += f" {lost} could not be reopened (said in their panes)."
    return text
