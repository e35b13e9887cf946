"""The window as a view of the melgui host: its main conversation and worker panes'
sessions run in the host (RemoteSession), quitting can leave them running in the
background, and when the host ends a new one takes them over (`take_over`).

The main conversation is taken when the window attaches (the one the host kept for the
folder, or the one shown, continued there: `take_host_main`) and followed as the host
runs it (`follow_hosted`): the history is the host's, the chat is drawn again from each
snapshot, and what the window cannot do to it yet is said.

    view = await attach_host(window)     # starts a host when none runs
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import weakref
from collections.abc import Awaitable, Callable
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QLabel, QWidget
from shiboken6 import isValid

from melgui.core.config.settings import Settings
from melgui.core.deadline import within
from melgui.core.protocol.messages import Conversation
from melgui.core.store.resume import Resumed
from melgui.core.worktrees.model import Worktree
from melgui.host.client import HostClient, HostGone, VersionRefused
from melgui.host.place import PlaceError
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from melgui.remote.link_client import LinkClient
from melgui.remote.remote_pty import HostTerminals, TerminalUnavailable
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.chat.paging import HISTORY_PAGE
from melgui.ui.checkpoints.actions import CheckpointActions
from melgui.ui.history import ConversationHistory
from melgui.ui.history.conversations import open_resumed
from melgui.ui.history.sidebar import HistorySidebar
from melgui.ui.inspector.inspector import Inspector
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.remote.remote_side import There
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
LEAVE_WITHIN = 3.0  # seconds a closing window waits to tell the host there it left
# (the app gives the whole close 5 s: melgui/ui/app.py shutdown)
PAINT_WAIT = 0.1  # seconds the front pane has to paint before the others are built


HOSTED_NOTE = (
    "This conversation runs in the melgui host: it goes on when the window closes with "
    "Keep running in the background. Not available while it runs there: the preview "
    "before a compaction (the host compacts without it)."
)
ENDED_WITH_HOST = "the melgui host stopped; the program ended with it"
NOT_MOVED = (
    "This conversation's turn runs in this window; the next conversation runs in the melgui host."
)
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
NOT_MOVED_THERE = (
    "This conversation goes on in this window; the next one runs in melgui's host on {there}."
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
    host_view: HostView | None

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
    Undo on cards, the review bar) ask the host, which took the checkpoints."""
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
    status = window.status
    if status.findChild(QLabel, "hostedLabel") is None:  # said once, on the status bar
        view = window.host_view
        there = f" on {view.there}" if view is not None and view.there else ""
        label = QLabel(f"Runs in the melgui host{there}", status)
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
    pane_manager: Any

    def project_folder(self) -> str: ...


class HostView:
    """The window's view of a melgui host: this machine's (`client`: a HostClient), or
    the one on a remote folder's machine (a LinkClient over the folder's link: `there`,
    its name, `folder` there, and the window's `api_key`, sent as a loop-there worker's
    is: `attach_there`)."""

    def __init__(
        self,
        window: MainWindow,
        client: HostClient | LinkClient,
        *,
        there: str = "",
        folder: str = "",
        api_key: str | None = None,
        start: HostStarter | None = None,
    ) -> None:
        self._window = weakref.ref(window)
        self.client = client
        self.there = there
        self.folder = folder
        self.api_key = api_key
        self.sessions: weakref.WeakSet[RemoteSession] = weakref.WeakSet()
        self.gone = ""
        self._returning: list[RemoteSession] = []
        self.main_back = False  # the main conversation the host kept came back as such
        self.start_host = start or attach_or_start
        self.restarts = 0  # new hosts this view started (or attached to) after one ended
        # Terminal panes' programs run in this machine's host too (the remote link's way,
        # one code); a remote folder's terminals go through its own link (RemoteSide).
        self.terminals = HostTerminals(
            "the melgui host", self._local_client,
            lambda: self.gone or "connected", here=True, source="window",
        )  # fmt: skip
        if isinstance(client, HostClient):
            client.on_notification = self.terminals.heard
            window.pane_manager.host = self.terminals
        client.on_gone = self._gone
        window.guard.background = self

    def _local_client(self) -> HostClient | None:
        """The connection to this machine's host, while it is up."""
        client = self.client
        return client if isinstance(client, HostClient) and not client.gone else None

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
        if self.api_key is not None:
            where["api_key"] = self.api_key  # kept in the memory of the host there only
        session = RemoteSession.start(
            self.client,
            folder=self.folder or window.project_folder(),
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
        panes (`main_back`: whether the main conversation came back).

        What is on screen comes first: the first worker's pane (in front when the window
        shows none yet) is attached and built alone, with its last page, and painted; then
        the main conversation is switched, then the other sessions are attached and their
        panes built behind, one per tick; the rest of every conversation follows."""
        window = self._window()
        assert window is not None
        listed = await self.client.call("session/list")
        here = self.folder or os.path.realpath(window.project_folder())
        mine = [s for s in listed if s["folder"] == here]
        # A main conversation another window shows stays that window's (and out of this
        # one: closing this window would close it there).
        mine = [s for s in mine if not (s.get("source") == MAIN and s.get("views"))]
        main = next((s for s in mine if s.get("source") == MAIN), None)
        if main is not None:
            mine.remove(main)
        # The main conversation's chat is on screen too: its last page comes with the
        # front pane's, in the same request.
        first = await self._reattach([*([main] if main else []), *mine[:1]])
        kept = next((s for s in first if main and s.session_id == main["id"]), None)
        reopened = [s for s in first if s is not kept]
        if reopened:
            pane = self._reopen_pane(window, mine[0], reopened[0])
            await painted(pane, PAINT_WAIT)  # a frame shows it before the rest is built
        window = self._window()
        if window is None or window.pane_manager.closed:
            return len(reopened)  # the window is closing: the host keeps the sessions
        if kept is not None:
            self.sessions.add(kept)
            self.main_back = True
        take_host_main(window, kept, self.there)
        behind = await self._reattach(mine[1:]) if len(mine) > 1 else []
        for n, session in enumerate(behind):
            if n:  # one pane per tick: the window paints between them
                await asyncio.sleep(0)
            if window.pane_manager.closed:
                break  # the window is closing: the host keeps the sessions
            described = next(d for d in mine if d["id"] == session.session_id)
            self._reopen_pane(window, described, session)
            reopened.append(session)
        whole = [*([kept] if kept is not None else []), *reopened]
        if whole and not window.pane_manager.closed:
            what = "reopened conversations' history" if reopened else "the conversation's history"
            window.tasks.spawn(self._fill(whole), what=what)
        return len(reopened)

    async def _reattach(self, described: list[dict[str, Any]]) -> list[RemoteSession]:
        """The sessions `described` (of `session/list`) attached with their last page, in
        that order; one the host closed since the list was read is left out."""
        if not described:
            return []
        try:
            return await RemoteSession.reattach(self.client, described, page=REATTACH_PAGE)
        except RpcError:  # one of them is gone (closed in another view): each alone
            if len(described) == 1:
                return []
        sessions = []
        for one in described:
            sessions += await self._reattach([one])
        return sessions

    def _reopen_pane(
        self, window: MainWindow, described: dict[str, Any], session: RemoteSession
    ) -> QWidget | None:
        """A worker pane on `session`, which the host kept running; returns the pane."""
        self._returning = [session]
        opened = window.pane_manager.reopen_worker(f"back: {described['id'][:6]}", "tab")
        pane = window.pane_manager.pane(opened.id)
        chat = getattr(pane, "chat", None)
        if chat is not None:  # drawn again once the whole conversation is in, on the next
            # tick: the taking of it and the drawing are two short stalls, not one long one
            session.on_whole = lambda: QTimer.singleShot(0, chat, chat.redraw_history)
        session.ask_again()  # its questions waiting: in the pane and the window's queue
        return pane if isinstance(pane, QWidget) else None

    async def reopen_terminals(self) -> int:
        """A pane for each terminal the host kept for this folder while no window showed
        it, its screen drawn again from what the host kept; returns how many."""
        window = self._window()
        assert window is not None
        client = self._local_client()
        if client is None:
            return 0  # a remote folder's: its terminals come back through its link
        manager = window.pane_manager
        try:
            kept = await self.terminals.kept(window.project_folder())
        except TerminalUnavailable:
            return 0
        for n, described in enumerate(kept):
            if manager.closed:
                return n  # the window is closing: the host keeps them
            pty = await self.terminals.adopt(client, described, *FIRST_SIZE)
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

    async def leave(self) -> None:
        """The window closes: a main conversation in the host there is left to it (its
        history is that host's, so the next window on the folder takes it back), told
        before the folder's link closes (in LEAVE_WITHIN seconds: a link that does not
        answer by then leaves it there anyway). This machine's host: the window's close
        closes it, unless Keep running in the background."""
        window = self._window()
        session = window.session if window is not None else None
        if not self.there or not isinstance(session, RemoteSession):
            return
        session.keep_running = True
        with contextlib.suppress(TimeoutError):
            await within(session.aclose(), LEAVE_WITHIN)

    # -- the host's end: a new host, the conversations reopened there --------------------

    def _gone(self, reason: str) -> None:
        """The host ended (killed, crashed): said once, and a new host takes over
        (`take_over`). The host on a remote folder's machine: its link is lost for good
        (each session there ended its turn saying why); one that restarted there is
        reached again by the link itself."""
        self.gone = reason
        self.terminals.end_all(ENDED_WITH_HOST)
        window = self._window()
        if window is None:
            return
        if self.there or not isinstance(self.client, HostClient):  # lost for good: said
            window.status.showMessage(f"melgui's host on {self.there} cannot be reached: {reason}")
            return
        if window.pane_manager.closed:  # the window is closing: it needs no new host
            window.status.showMessage(reason)
            return
        ended = self.client
        viewed = say_ended(window, [s for s in self.sessions if s.session_id in ended.sessions])
        window.tasks.spawn(take_over(window, self, ended, viewed), what="starting a new host")

    def took_over(self, client: HostClient) -> None:
        """`client`, to the new host, is this view's from now on."""
        self.client, self.gone = client, ""
        self.restarts += 1
        client.on_gone = self._gone
        client.on_notification = self.terminals.heard  # new terminals open in the new host


async def attach_host(
    window: MainWindow, client: HostClient | None = None, start: HostStarter | None = None
) -> HostView:
    """Attach to the user's host (starting one when none runs; `client`: one connected
    already; `start`: how a new host is started when this one ends); the window's worker
    panes run there from now on, and the ones it kept running come back in panes."""
    if window.host_view is not None and window.host_view.there:
        return window.host_view  # a remote folder's loop runs in its host there
    client = client or await (start or attach_or_start)()
    return await take_view(
        window, HostView(window, client, start=start), "Attached to the melgui host"
    )


async def attach_there(
    window: MainWindow, reach: Awaitable[There | None], api_key: str | None
) -> HostView | None:
    """A remote folder's window whose host says `loop_there` (RemoteSide.take_main): its
    main conversation (and what it starts: reviews) in melgui's host there from now on,
    once the folder's link is open: the one that host kept for the folder, or the one
    shown (while nothing was said in it yet), with the window's key sent as a loop-there
    worker's is. None: the loop stays here (a local model: said why)."""
    try:
        there = await reach
    except ValueError as exc:  # a local model: the loop cannot go there
        window.status.showMessage(str(exc), 60000)
        window.chat.show_note(str(exc))
        return None
    if there is None:  # the link did not open: said in the status bar
        return None
    view = HostView(
        window, there.client, there=there.where, folder=there.folder, api_key=api_key or ""
    )
    return await take_view(window, view, f"This folder's loop runs on {there.where}")


async def take_view(window: MainWindow, view: HostView, attached: str) -> HostView:
    """`view` is the window's from now on: what its host kept running comes back, said
    after `attached`."""
    window.host_view = view
    count = await view.reopen_running()
    terminals = await view.reopen_terminals()
    back = ["the main conversation is back"] if view.main_back else []
    if count:
        back.append(f"{count} agent(s) that kept running are back in panes")
    if terminals:
        back.append(f"{terminals} terminal(s) that kept running are back in panes")
    if back:
        window.status.showMessage(f"{attached}: {'; '.join(back)}.")
    return view


class _FirstPaint(QObject):
    """Resolves `done` when the widget it watches paints."""

    def __init__(self, done: asyncio.Future[None]) -> None:
        super().__init__()
        self.done = done

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if event.type() == QEvent.Type.Paint and not self.done.done():
            self.done.set_result(None)
        return False


async def painted(widget: QWidget | None, limit: float) -> None:
    """Until `widget` has painted (a frame of the window shows it), `limit` seconds at
    most: a widget not on screen may never paint."""
    if widget is None or not widget.isVisible():
        return
    watch = _FirstPaint(asyncio.get_running_loop().create_future())
    widget.installEventFilter(watch)
    try:
        with contextlib.suppress(TimeoutError):
            await within(watch.done, limit)
    finally:
        if isValid(widget):  # closed meanwhile: its filters went with it
            widget.removeEventFilter(watch)


async def attach_or_start() -> HostClient:
    """The user's host, started when none runs, as a window attaches to it."""
    return await HostClient.attach_or_start(client="window")


def _connection(settings: Settings) -> dict[str, str]:
    """The window's connection, for the host's session to reach the model the same way."""
    return {
        "connection": settings.connection,
        "relay_url": settings.relay_url,
        "relay_stream_path": settings.relay_stream_path,
        "openai_base_url": settings.openai_base_url,
    }


# -- the host's end: said, a new host, each conversation reopened there -------------------


def say_ended(window: MainWindow, viewed: list[RemoteSession]) -> list[RemoteSession]:
    """The host ended: said on the status bar, and in each conversation it ran for this
    window (its turn, if one ran, ends; its questions go); returns them."""
    window.status.showMessage(HOST_ENDED)
    for session in viewed:
        ran = session.busy or bool(session.loop.pending_approvals())
        session.host_ended(CUT if ran else IDLE, TURN_ENDED)
    return viewed


async def take_over(
    window: MainWindow, view: HostView, ended: HostClient, viewed: list[RemoteSession]
) -> None:
    """Start a new host (or attach to the one another view started) and go on there with
    each conversation viewed here; with none, the main conversation goes on here."""
    try:
        client = await view.start_host()
    except (OSError, VersionRefused, PlaceError) as exc:
        await ended.aclose()
        if view.client is ended:
            fall_back(window, viewed, str(exc))
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
    window: MainWindow, view: HostView, session: RemoteSession, there: set[str]
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


def fall_back(window: MainWindow, viewed: list[RemoteSession], why: str) -> None:
    """No new host: the main conversation goes on in this window, from the history (where
    the host recorded it), and new workers run here too."""
    window.host_view = None
    window.guard.background = None
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
