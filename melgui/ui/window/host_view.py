"""The window as a view of the melgui host: its main conversation and worker panes'
sessions run in the host (RemoteSession), the host's end is said in plain words, and
quitting can leave them running in the background.

The main conversation is taken when the window attaches (the one the host kept for the
folder, or the one shown, continued there: `take_host_main`) and followed as the host
runs it (`follow_hosted`): the history is the host's, the chat is drawn again from each
snapshot, and what the window cannot do to it yet is said.

    view = await attach_host(window)     # starts a host when none runs
"""

from __future__ import annotations

import asyncio
import os
import weakref
from typing import Any, Protocol

from PySide6.QtWidgets import QLabel

from melgui.core.config.settings import Settings
from melgui.core.protocol.messages import Conversation
from melgui.core.worktrees.model import Worktree
from melgui.host.client import HostClient, HostGone
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from melgui.remote.remote_pty import HostTerminals, TerminalUnavailable
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.paging import HISTORY_PAGE
from melgui.ui.checkpoints.actions import CheckpointActions
from melgui.ui.history import ConversationHistory
from melgui.ui.history.sidebar import HistorySidebar
from melgui.ui.inspector.inspector import Inspector
from melgui.ui.panes.terminal.elsewhere import FIRST_SIZE, pane_of
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import SessionBridge
from melgui.ui.runtime.quit_guard import QuitGuard
from melgui.ui.runtime.sessions import MainSession
from melgui.ui.window.status_line import StatusLine

# Reopened sessions come with their last page of messages (what the chat paints first);
# the rest follows a session at a time, after the window has painted.
REATTACH_PAGE = HISTORY_PAGE
MAIN = "main"  # the source of a window's main conversation
FILL_AFTER = 0.25  # seconds


HOSTED_NOTE = (
    "This conversation runs in the melgui host: it goes on when the window closes with "
    "Keep running in the background. Not available while it runs there: Rewind, Undo on "
    "call cards, the review bar, pins, the context's breakdown and measure, and /review."
)
ENDED_WITH_HOST = "the melgui host stopped; the program ended with it"
NOT_MOVED = (
    "This conversation's turn runs in this window; the next conversation runs in the melgui host."
)


class Window(Protocol):
    """What the main conversation in the host uses of the main window."""

    session: MainSession
    bridge: SessionBridge
    chat: ChatView
    inspector: Inspector
    status: StatusLine
    history: HistorySidebar
    history_keeper: ConversationHistory
    checkpoint_actions: CheckpointActions

    def replace_session(
        self,
        conversation: Conversation,
        failures: tuple[()] = (),
        cid: str | None = None,
        hosted: RemoteSession | None = None,
    ) -> None: ...


def take_host_main(window: Window, kept: RemoteSession | None) -> None:
    """The window became a view of the melgui host: its main conversation runs there from
    now on: `kept`, the one the host kept for this folder, or the one shown now, continued
    there (a new one when it has no message yet; a turn running here ends here)."""
    local = window.session
    if isinstance(local, RemoteSession):
        return
    if kept is not None:
        window.replace_session(kept.conversation, hosted=kept)
        window.chat.follow_calls(kept.thread.calls())  # a question waiting: on its card
        kept.ask_again()  # and in the window's queue
        return
    if local.busy:
        window.status.showMessage(NOT_MOVED, 15000)
        return
    recording = window.history_keeper.journal.current
    begun = recording is not None and bool(local.conversation.messages)
    cid = recording.conversation_id if recording is not None and begun else None
    window.replace_session(local.conversation, cid=cid)


def follow_history_and_checkpoints(window: Window, session: MainSession) -> None:
    """The history records the main conversation shown now and the checkpoints' actions
    follow it; for one in the melgui host, see `follow_hosted`."""
    if isinstance(session, RemoteSession):
        follow_hosted(window, session)
    else:
        window.history_keeper.follow(session, window.bridge.recorder.listen)
        window.checkpoint_actions.follow(session, window.chat, window.inspector)


def follow_hosted(window: Window, session: RemoteSession) -> None:
    """A main conversation in the melgui host, shown now: the host records it in the
    history (the sidebar points at it and is read again after each turn), its chat is
    drawn again from each snapshot the host sends, and the checkpoints' actions (Rewind,
    Undo on cards, the review bar) are left out, as the status bar's "Runs in the melgui
    host" says in its tooltip."""
    window.history_keeper.follow_elsewhere(session.conversation_id)
    window.checkpoint_actions.leave()
    chat, history = window.chat, window.history

    def took() -> None:
        if session is window.session:
            history.set_current(session.conversation_id or None)
            chat.redraw_history()
            chat.follow_calls(session.thread.calls())

    session.on_snapshot = session.on_whole = took
    window.bridge.busyChanged.connect(lambda busy: None if busy else history.refresh())
    status = window.status
    if status.findChild(QLabel, "hostedLabel") is None:  # said once, on the status bar
        label = QLabel("Runs in the melgui host", status)
        label.setObjectName("hostedLabel")
        label.setToolTip(HOSTED_NOTE)
        status.addPermanentWidget(label)


class MainWindow(Window, Protocol):
    """What this module uses of the main window (and what its main conversation in the
    host uses: hosted_main.Window)."""

    @property
    def settings(self) -> Settings: ...

    guard: QuitGuard
    tasks: TaskKeeper
    host_view: HostView | None
    pane_manager: Any

    def project_folder(self) -> str: ...


class HostView:
    def __init__(self, window: MainWindow, client: HostClient) -> None:
        self._window = weakref.ref(window)
        self.client = client
        self.sessions: weakref.WeakSet[RemoteSession] = weakref.WeakSet()
        self.gone = ""
        self._returning: list[RemoteSession] = []
        self.main_back = False  # the main conversation the host kept came back as such
        # Terminal panes' programs run in the host too (the remote link's way, one code).
        self.terminals = HostTerminals(
            "the melgui host", lambda: None if client.gone else client,
            lambda: self.gone or "connected", here=True, source="window",
        )  # fmt: skip
        client.on_notification = self.terminals.heard
        client.on_gone = self._gone
        window.guard.background = self
        window.pane_manager.host = self.terminals

    def worker(
        self, role: str, model: str, source: str, worktree: Worktree | None = None
    ) -> RemoteSession:
        window = self._window()
        assert window is not None
        if self._returning:  # a pane reopened on a session the host kept running
            session = self._returning.pop(0)
            self.sessions.add(session)
            return session
        return self._start(window, model, role, source, worktree=worktree)

    def main(self, *, model: str, role: str, conversation: str | None = None) -> RemoteSession:
        """A new main conversation in the host (`conversation`: the history's one of that
        id, continued there)."""
        window = self._window()
        assert window is not None
        return self._start(window, model, role, MAIN, conversation=conversation)

    def _start(
        self, window: MainWindow, model: str, role: str, source: str, **where: Any
    ) -> RemoteSession:
        """A new session of the host on the window's folder and connection, viewed here."""
        session = RemoteSession.start(
            self.client,
            folder=window.project_folder(),
            model=model,
            role=role,
            source=source,
            settings=_connection(window.settings),
            **where,
        )
        self.sessions.add(session)
        return session

    async def reopen_running(self) -> int:
        """The main conversation of this folder the host kept running (or kept open) while
        no window was attached, as the window's main conversation again (a new one in the
        host when there is none), and a pane for each worker session; returns how many
        panes (`main_back`: whether the main conversation came back)."""
        window = self._window()
        assert window is not None
        listed = await self.client.call("session/list")
        here = os.path.realpath(window.project_folder())
        mine = [s for s in listed if s["folder"] == here]
        # A main conversation another window shows stays that window's (and out of this
        # one: closing this window would close it there).
        mine = [s for s in mine if not (s.get("source") == MAIN and s.get("views"))]
        main = next((s for s in mine if s.get("source") == MAIN), None)
        if main is not None:
            mine.remove(main)
        back = [*([main] if main else []), *mine]
        sessions = (
            await RemoteSession.reattach(self.client, back, page=REATTACH_PAGE) if back else []
        )
        returning = sessions[1:] if main else sessions
        if main is not None:
            self.sessions.add(sessions[0])
            self.main_back = True
        take_host_main(window, sessions[0] if main else None)
        if not mine:
            if main is not None:
                window.tasks.spawn(self._fill(sessions), what="the conversation's history")
            return 0
        for n, (described, session) in enumerate(zip(mine, returning, strict=True)):
            if n:  # one pane per tick: the first, in front, paints before the rest are built
                await asyncio.sleep(0)
                if window.pane_manager.closed:
                    return n  # the window is closing: the host keeps the sessions
            self._returning = [session]
            opened = window.pane_manager.reopen_worker(f"back: {described['id'][:6]}", "tab")
            pane = window.pane_manager.pane(opened.id)
            chat = getattr(pane, "chat", None)
            if chat is not None:  # drawn again once the whole conversation is in
                session.on_whole = chat.redraw_history
        window.tasks.spawn(self._fill(sessions), what="reopened conversations' history")
        return len(mine)

    async def reopen_terminals(self) -> int:
        """A pane for each terminal the host kept for this folder while no window showed
        it, its screen drawn again from what the host kept; returns how many."""
        window = self._window()
        assert window is not None
        manager = window.pane_manager
        try:
            kept = await self.terminals.kept(window.project_folder())
        except TerminalUnavailable:
            return 0
        for n, described in enumerate(kept):
            if manager.closed:
                return n  # the window is closing: the host keeps them
            pty = await self.terminals.adopt(self.client, described, *FIRST_SIZE)
            pane = pane_of(pty, None, window.project_folder())
            manager.add_terminal(pane, pty.title, "tab")
        return len(kept)

    async def _fill(self, sessions: list[RemoteSession]) -> None:
        """The rest of each reopened conversation, one session at a time, once the window
        has painted their ends."""
        await asyncio.sleep(FILL_AFTER)
        for session in sessions:
            if session.session_id not in self.client.sessions:
                continue  # its pane closed meanwhile
            try:
                await session.whole()
            except (HostGone, OSError, RpcError) as exc:  # the pane keeps its last page
                session.problem = str(exc)

    # -- Keep running in the background ------------------------------------------------

    def offered(self) -> bool:
        busy = any(s.busy for s in self.sessions)
        return not self.gone and (busy or bool(self.terminals.open_ptys))

    def keep_running(self) -> None:
        for session in self.sessions:
            session.keep_running = True
        self.terminals.keep_running()

    def _gone(self, reason: str) -> None:
        self.gone = reason
        self.terminals.end_all(ENDED_WITH_HOST)
        window = self._window()
        if window is not None:
            window.status.showMessage(reason)


async def attach_host(window: MainWindow, client: HostClient | None = None) -> HostView:
    """Attach to the user's host (starting one when none runs; `client`: one connected
    already); the window's worker panes run there from now on, and the ones it kept
    running come back in panes."""
    client = client or await HostClient.attach_or_start(client="window")
    view = HostView(window, client)
    window.host_view = view
    count = await view.reopen_running()
    terminals = await view.reopen_terminals()
    back = ["the main conversation is back"] if view.main_back else []
    if count:
        back.append(f"{count} agent(s) that kept running are back in panes")
    if terminals:
        back.append(f"{terminals} terminal(s) that kept running are back in panes")
    if back:
        window.status.showMessage(f"Attached to the melgui host: {'; '.join(back)}.")
    return view


def _connection(settings: Settings) -> dict[str, str]:
    """The window's connection, for the host's session to reach the model the same way."""
    return {
        "connection": settings.connection,
        "relay_url": settings.relay_url,
        "relay_stream_path": settings.relay_stream_path,
        "openai_base_url": settings.openai_base_url,
    }
