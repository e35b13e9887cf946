"""The window as a view of the melgui host: worker panes' sessions run in the host
(RemoteSession), the host's end is said in plain words, and quitting can leave them
running in the background.

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


class HostView:
    def __init__(self, window: MainWindow, client: HostClient) -> None:
        self._window = weakref.ref(window)
        self.client = client
        self.sessions: weakref.WeakSet[RemoteSession] = weakref.WeakSet()
        self.gone = ""
        self._returning: list[RemoteSession] = []
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
        settings = window.settings
        connection = {
            "connection": settings.connection,
            "relay_url": settings.relay_url,
            "relay_stream_path": settings.relay_stream_path,
            "openai_base_url": settings.openai_base_url,
        }
        session = RemoteSession.start(
            self.client,
            folder=window.project_folder(),
            model=model,
            role=role,
            source=source,
            settings=connection,
            worktree=worktree,
        )
        self.sessions.add(session)
        return session

    async def reopen_running(self) -> int:
        """A pane for each worker session of this folder the host kept running (or kept
        open) while no window was attached; returns how many."""
        window = self._window()
        assert window is not None
        listed = await self.client.call("session/list")
        here = os.path.realpath(window.project_folder())
        mine = [s for s in listed if s["folder"] == here]
        if not mine:
            return 0
        returning = await RemoteSession.reattach(self.client, mine, page=REATTACH_PAGE)
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
        window.tasks.spawn(self._fill(returning), what="reopened conversations' history")
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
    if count:
        window.status.showMessage(
            f"Attached to the melgui host: {count} agent(s) that kept running are back in panes."
        )
    return view
