"""The end of the melgui host a window views (killed, crashed): said once, then a new
host takes each conversation over from the journal (`take_over`), or, when none can
start, the main conversation goes on in the window (`fall_back`), marked in the dead
host's journal as the window's, so that no host started later reopens it too.
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
from melgui.ui.window.host_view.main_conversation import MainWindow

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
NO_NEW_HOST = "No new melgui host could start: the conversation goes on in this window."
NO_NEW_HOST_NOTE = (
    "The melgui host stopped unexpectedly and no new host could start ({why}). This "
    "conversation goes on in this window, reopened from the history: the programs its turn "
    "ran ended with the host, as did the worker panes' agents."
)
WORKER_KEPT = (
    "No new melgui host could start: this worker ended with the host. Its conversation is "
    "kept in the history."
)
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

    def let_go(self) -> None: ...


def say_ended(window: MainWindow, viewed: list[RemoteSession]) -> list[RemoteSession]:
    """The host ended: said on the status bar, and in each conversation it ran for this
    window (its turn, if one ran, ends; its questions go); returns them."""
    window.status.showMessage(HOST_ENDED)
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
        if view.client is ended:
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
    window.status.showMessage(_reopened_message(reopened))


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
