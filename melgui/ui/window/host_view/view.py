"""The window as a view of a melgui host: its main conversation and worker panes'
sessions, and its terminals' programs, run in the host (this machine's, or a remote
folder's host there when that folder's loop runs there), and quitting can leave them
running in the background.

    view = await attach_host(window)     # starts a host when none runs
    view = await attach_private(window)  # a host of the window's own, its child (--no-host)

A window's private host (`melgui --no-host`, Windows, a user's host that cannot be had) is
a view of a host like any other, but nothing in it outlives the window: no Keep running in
the background, and its child ends with the window (`aclose`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import weakref
from collections.abc import Awaitable
from typing import Any, Protocol

from PySide6.QtCore import QEvent, QObject, QTimer
from PySide6.QtWidgets import QWidget
from shiboken6 import isValid

from melgui.core.config.settings import Settings
from melgui.core.protocol.messages import Conversation
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.runtime.deadline import within
from melgui.core.worktrees.model import Worktree
from melgui.desk.desk import Desk
from melgui.host.client import HostClient, HostGone
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from melgui.remote.link_client import LinkClient
from melgui.remote.remote_pty import HostTerminals, TerminalUnavailable
from melgui.ui.chat.paging import HISTORY_PAGE
from melgui.ui.history.there import ThereListing
from melgui.ui.mcp.controls import McpControls
from melgui.ui.mcp.host_servers import HostMcpView
from melgui.ui.panes.manager import AcpFactory
from melgui.ui.panes.remote.remote_side import There
from melgui.ui.panes.terminal.elsewhere import FIRST_SIZE, pane_of
from melgui.ui.runtime.agent_in_host import RemoteAgentSession, view_of
from melgui.ui.runtime.host_approvals import HostApprovals
from melgui.ui.runtime.sessions import MainSession
from melgui.ui.window.host_view.host_end import (
    OWN_ATTACHED,
    OWN_STARTED,
    HostStarter,
    say_ended,
    say_own,
    take_over,
)
from melgui.ui.window.host_view.main_conversation import (
    MainWindow,
    Window,
    follow_hosted,
    take_host_main,
)
from melgui.ui.window.host_view.models import models_from_host
from melgui.ui.window.host_view.private_host import PrivateHost
from melgui.ui.window.model_choice import ModelChoice
from melgui.ui.window.side.plans_panel import PlansPanel

# Reopened sessions come with their last page of messages (what the chat paints first);
# the rest follows a session at a time, after the window has painted.
REATTACH_PAGE = HISTORY_PAGE
MAIN = "main"  # the source of a window's main conversation
FILL_AFTER = 0.25  # seconds
LEAVE_WITHIN = 3.0  # seconds a closing window waits to tell the host there it left
# (the app gives the whole close 5 s: melgui/ui/app.py shutdown)
PAINT_WAIT = 0.1  # seconds the front pane has to paint before the others are built
ENDED_WITH_HOST = "the melgui host stopped; the program ended with it"


class ViewedWindow(MainWindow, Protocol):
    """The main window, whose view of a host this is."""

    host_view: HostView | None
    desk: Desk
    mcp: McpControls
    models: ModelChoice
    plans_panel: PlansPanel


class HostView:
    """The window's view of a melgui host: this machine's (`client`: a HostClient), or
    the one on a remote folder's machine (a LinkClient over the folder's link: `there`,
    its name, `folder` there, and the window's `api_key`, sent as a loop-there worker's
    is: `attach_there`)."""

    def __init__(
        self,
        window: ViewedWindow,
        client: HostClient | LinkClient,
        *,
        there: str = "",
        folder: str = "",
        api_key: str | None = None,
        start: HostStarter | None = None,
        settings: dict[str, Any] | None = None,
        private: PrivateHost | None = None,
    ) -> None:
        self._window = weakref.ref(window)
        self.client = client
        self.there = there
        self.folder = folder
        self.api_key = api_key
        # Sent with each session it opens beside the window's connection: a remote
        # folder's host's sandbox and env (the host there applies them to its commands).
        self.settings = dict(settings or {})
        self.sessions: weakref.WeakSet[RemoteSession] = weakref.WeakSet()
        self.gone = ""
        self._returning: list[RemoteSession] = []
        self.main_back = False  # the main conversation the host kept came back as such
        # The window's own host, its child (None: the user's host, or a remote one).
        self.private = private
        self.start_host = start or (private.start if private is not None else attach_or_start)
        # The window's approval settings, sent to each session it runs there.
        self.approvals = HostApprovals(window.desk)
        self.restarts = 0  # new hosts this view started (or attached to) after one ended
        # Terminal panes' programs run in this machine's host too (the remote link's way,
        # one code); a remote folder's terminals go through its own link (RemoteSide).
        self.terminals = HostTerminals(
            "the melgui host", self._local_client,
            lambda: self.gone or "connected", here=True, source="window",
        )  # fmt: skip
        # The folder's MCP servers run in this machine's host too, where its conversations
        # call them; the window's MCP panel shows and drives them there.
        self.mcp: HostMcpView | None = None
        # ACP agent panes run their agents in this machine's host too (the window's own
        # factory given back when no host is left).
        self._acp_here: AcpFactory | None = None
        if isinstance(client, HostClient):
            client.on_notification = self._heard
            window.pane_manager.host = self.terminals
            self._acp_here = window.pane_manager.acp_factory
            if self._acp_here is not None:
                window.pane_manager.acp_factory = self.agent
        if isinstance(client, HostClient) and not window.mcp.desk.mcp_elsewhere:  # not remote
            self.mcp = HostMcpView(
                client, folder=window.project_folder, settings=lambda: _connection(window.settings)
            )
            window.mcp.use_host(self.mcp)
        client.on_gone = self._gone
        if private is None:  # a private host ends with its window: nothing to keep running
            window.guard.background = self

    @property
    def own(self) -> bool:
        """The host is this window's own (its child), not the user's."""
        return self.private is not None

    def _heard(self, method: str, params: dict[str, Any]) -> None:
        if self.mcp is None or not self.mcp.heard(method, params):
            self.terminals.heard(method, params)

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
            self.approvals.track(session)
            return session
        return self._start(window, model, role, source, worktree=worktree)

    def agent(self, command: AgentCommand, title: str, resume: str | None) -> RemoteAgentSession:
        """An ACP agent pane's session: its program and ACP client run in the host (one
        the host kept running, when a pane is reopened on it)."""
        window = self._window()
        assert window is not None
        returning = self._returning[0] if self._returning else None
        if isinstance(returning, RemoteAgentSession):
            self._returning = []
            session = returning
        else:
            session = RemoteAgentSession.open(
                self.client, folder=self.folder or window.project_folder(), command=command,
                source=title, resume=resume,
            )  # fmt: skip
            self.sessions.add(session)
        session.agent.plan.sink = window.plans_panel.sink  # its plan, as a window agent's
        session.agent.plan.show()  # the one a snapshot brought back
        return session

    def main(self, *, model: str, role: str, conversation: str | None = None) -> RemoteSession:
        """A new main conversation in the host (`conversation`: the history's one of that
        id, continued there)."""
        window = self._window()
        assert window is not None
        return self._start(window, model, role, MAIN, conversation=conversation)

    async def history(self, query: str) -> list[dict[str, Any]]:
        """The folder's conversations in the host's history (`history/list`, protocol
        12): a remote folder's sidebar lists them (the host there's store has them)."""
        return list(await self.client.call("history/list", folder=self.folder, query=query))

    def open_there(self, cid: str) -> None:
        """The host's conversation `cid` (of its history), continued there as the
        window's main conversation; its messages come with the session's snapshot."""
        window = self._window()
        if window is None:
            return
        if self.gone:
            window.status.showMessage(f"melgui's host on {self.there} cannot be reached")
            return
        model, role = window.session.loop.model, window.settings.role
        hosted = self.main(model=model, role=role, conversation=cid)
        window.replace_session(Conversation(), hosted=hosted)

    def _start(
        self, window: ViewedWindow, model: str, role: str, source: str, **where: Any
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
            settings={**_connection(window.settings), **self.settings},
            **where,
        )
        self.sessions.add(session)
        self.approvals.track(session)
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
            self.approvals.track(kept)
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
            return await RemoteSession.reattach(
                self.client, described, page=REATTACH_PAGE, view_of=view_of
            )
        except RpcError:  # one of them is gone (closed in another view): each alone
            if len(described) == 1:
                return []
        sessions = []
        for one in described:
            sessions += await self._reattach([one])
        return sessions

    def _reopen_pane(
        self, window: ViewedWindow, described: dict[str, Any], session: RemoteSession
    ) -> QWidget | None:
        """A worker's or an ACP agent's pane on `session`, which the host kept running;
        returns the pane."""
        if isinstance(session, RemoteAgentSession):  # its pane draws the host's snapshots
            self.sessions.add(session)
            self._returning = [session]
            try:
                opened = window.pane_manager.open_agent(session.agent.command, "tab")
            finally:
                self._returning = []  # taken, or not: never a worker's
            session.ask_again()  # its questions waiting: in the window's queue
            found = window.pane_manager.pane(opened.id)
            return found if isinstance(found, QWidget) else None
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
            window.history_keeper.list_there(None)  # its history cannot be read any more
            window.status.showMessage(f"melgui's host on {self.there} cannot be reached: {reason}")
            return
        if window.pane_manager.closed:  # the window is closing: it needs no new host
            window.status.showMessage(reason)
            return
        ended = self.client
        mine = [s for s in self.sessions if s.session_id in ended.sessions]
        viewed = say_ended(window, mine, own=self.own)
        window.tasks.spawn(take_over(window, self, ended, viewed), what="starting a new host")

    def let_go(self) -> None:
        """No host any more (none could start after this one ended): the window is no
        view of one, and quitting asks of nothing in a host."""
        window = self._window()
        if window is not None and window.host_view is self:
            window.host_view = None
            window.guard.background = None
            if self.mcp is not None:  # the folder's servers start in the window again
                window.mcp.no_host()
            if self._acp_here is not None:  # new agent panes run theirs in the window
                window.pane_manager.acp_factory = self._acp_here
        if self.private is not None:  # its journal goes: nothing reopens from it any more
            private, self.private = self.private, None
            if window is not None:
                window.tasks.spawn(private.end(), what="ending this window's melgui host")

    def went_private(self, private: PrivateHost, client: HostClient) -> None:
        """The user's host ended and no new one started: `client`, to a host of the
        window's own (`private`), is this view's from now on; it ends with the window."""
        self.private = private
        self.start_host = private.start
        self.took_over(client)
        window = self._window()
        if window is not None and window.guard.background is self:
            window.guard.background = None
        if window is not None:
            say_own(window)

    async def aclose(self) -> None:
        """The window closed: its private host's child ended and reaped, its journal
        removed (the user's host runs on, as its own)."""
        if self.private is not None:
            await self.private.end()

    def took_over(self, client: HostClient) -> None:
        """`client`, to the new host, is this view's from now on."""
        self.client, self.gone = client, ""
        self.restarts += 1
        client.on_gone = self._gone
        client.on_notification = self._heard  # new terminals open in the new host
        window = self._window()
        if self.mcp is not None and window is not None:  # its servers, started there
            self.mcp.took_over(client)
            window.mcp.start()


def follow_history_and_checkpoints(window: Window, session: MainSession) -> None:
    """The history records the main conversation shown now and the checkpoints' actions
    follow it; for one in the melgui host, see `follow_hosted`."""
    if isinstance(session, RemoteSession):
        follow_hosted(window, session)
    else:
        window.history_keeper.follow(session, window.bridge.recorder.listen)
        window.checkpoint_actions.follow(session, window.chat, window.inspector)


async def attach_host(
    window: ViewedWindow, client: HostClient | None = None, start: HostStarter | None = None
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


async def attach_private(window: ViewedWindow, why: str = "") -> HostView | None:
    """A host of the window's own, its child over stdin and stdout (`melgui host --stdio`:
    private_host.py), viewed as the user's host is; said on the status line, after `why`
    (why it is not the user's host). Raises OSError when none can start; None when the
    window closed meanwhile."""
    private = PrivateHost()
    try:
        client = await private.start()
    except BaseException:
        await private.end()
        raise
    if window.pane_manager.closed:  # the window closed meanwhile
        await private.end()
        return None
    view = await take_view(window, HostView(window, client, private=private), OWN_ATTACHED)
    say_own(window)
    if why:
        window.status.showMessage(f"{why}. {OWN_STARTED}")
    elif not view.main_back:
        window.status.showMessage(OWN_STARTED, 15000)
    return view


async def attach_there(
    window: ViewedWindow, reach: Awaitable[There | None], api_key: str | None
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
        window, there.client, there=there.where, folder=there.folder, api_key=api_key or "",
        settings=there.settings,
    )  # fmt: skip
    # The conversations it runs are kept in its history there: the sidebar lists them.
    listing = ThereListing(there.where, there.folder, view.history)
    window.history_keeper.list_there(listing, view.open_there)
    return await take_view(window, view, f"This folder's loop runs on {there.where}")


async def take_view(window: ViewedWindow, view: HostView, attached: str) -> HostView:
    """`view` is the window's from now on: what its host kept running comes back, said
    after `attached`."""
    window.host_view = view
    window.models.host_settled(  # no HTTP client in the window for them
        lambda: models_from_host(
            view.client,
            window.desk.connection.list_models,
            window.project_folder(),
            _connection(window.settings),
        )
    )
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
