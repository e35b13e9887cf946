"""The window as a view of the melgui host: its main conversation and worker panes'
sessions run in the host (RemoteSession), the host's end is said in plain words, and
quitting can leave them running in the background.

    view = await attach_host(window)     # starts a host when none runs
"""

from __future__ import annotations

import asyncio
import os
import weakref
from typing import Any, Protocol

from melgui.core.config.settings import Settings
from melgui.core.worktrees.model import Worktree
from melgui.host.client import HostClient, HostGone
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from melgui.ui.chat.paging import HISTORY_PAGE
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.quit_guard import QuitGuard

# Reopened sessions come with their last page of messages (what the chat paints first);
# the rest follows a session at a time, after the window has painted.
REATTACH_PAGE = HISTORY_PAGE
MAIN = "main"  # the source of a window's main conversation
FILL_AFTER = 0.25  # seconds


class MainWindow(Protocol):
    """What this module uses of the main window."""

    @property
    def settings(self) -> Settings: ...

    guard: QuitGuard
    status: Any
    tasks: TaskKeeper
    host_view: HostView | None
    pane_manager: Any

    def project_folder(self) -> str: ...

    def take_host_main(self, session: RemoteSession | None) -> None: ...


class HostView:
    def __init__(self, window: MainWindow, client: HostClient) -> None:
        self._window = weakref.ref(window)
        self.client = client
        self.sessions: weakref.WeakSet[RemoteSession] = weakref.WeakSet()
        self.gone = ""
        self._returning: list[RemoteSession] = []
        self.main_back = False  # the main conversation the host kept came back as such
        client.on_gone = self._gone
        window.guard.background = self

    def worker(
        self, role: str, model: str, source: str, worktree: Worktree | None = None
    ) -> RemoteSession:
        window = self._window()
        assert window is not None
        if self._returning:  # a pane reopened on a session the host kept running
            session = self._returning.pop(0)
            self.sessions.add(session)
            return session
        session = RemoteSession.start(
            self.client,
            folder=window.project_folder(),
            model=model,
            role=role,
            source=source,
            settings=_connection(window.settings),
            worktree=worktree,
        )
        self.sessions.add(session)
        return session

    def main(self, *, model: str, role: str, conversation: str | None = None) -> RemoteSession:
        """A new main conversation in the host (`conversation`: the history's one of that
        id, continued there)."""
        window = self._window()
        assert window is not None
        session = RemoteSession.start(
            self.client,
            folder=window.project_folder(),
            model=model,
            role=role,
            source=MAIN,
            settings=_connection(window.settings),
            conversation=conversation,
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
        window.take_host_main(sessions[0] if main else None)
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
        return not self.gone and any(s.busy for s in self.sessions)

    def keep_running(self) -> None:
        for session in self.sessions:
            session.keep_running = True

    def _gone(self, reason: str) -> None:
        self.gone = reason
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
    back = ["the main conversation is back"] if view.main_back else []
    if count:
        back.append(f"{count} agent(s) that kept running are back in panes")
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
