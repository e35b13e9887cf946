"""Remote folders and hosts in the window: the window makes one RemoteSide with what it
needs (`RemoteSide(panes, desk, ...)`) and gives it to its panes (`panes.remote`).

- Settings.hosts become places workers and terminals can run on (`@NAME` in a worker's
  task, New worker…'s choice, list_panes' `where`), each reached by one link;
- `open_folder(url)` makes the window a remote folder's: its chat's workspace tools, its
  terminals, its workers and every configured MCP server run there, the loop and the key
  stay here (the window is told, `opened(url, elsewhere)`, and starts a conversation on
  them); a folder on a configured host takes its settings, and with its `loop_there` the
  main conversation's loop runs there too (`take_main`: the window becomes a view of the
  host there: melgui/ui/window/host_view/view.py `attach_there`);
- a host's MCP servers start there on its first use; their tools are offered to the
  sessions whose tools run there, one that did not start is said (`say`: under the
  chat), and the MCP panel lists them (`desk.mcp_there`), with a remote folder's own
  `.melgui/mcp.json` waiting there for the person's trust;
- a remote folder's ACP agent panes run their agent there (melgui/remote/remote_agent.py);
- the links' state shows in the status bar, ssh's questions in dialogs, and File's
  Open remote folder… asks for one (`ask_folder`: a window of its own per folder;
  recent ones remembered).
"""

from __future__ import annotations

import asyncio
import hashlib
import re
import weakref
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

from PySide6.QtWidgets import QStatusBar, QWidget

from melgui.core.agent.session import AgentSession
from melgui.core.config.settings import RemoteHost, data_dir
from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.catalog import CatalogThere
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.desk.desk import Desk
from melgui.desk.hosted_agents.session import HostedAgentSession
from melgui.host.remote_session import RemoteSession
from melgui.remote.askpass import Question
from melgui.remote.connect import folder_key, given_host_argv
from melgui.remote.hosts import Place, RemoteHosts, configured_for
from melgui.remote.link import Link, LinkError
from melgui.remote.link_client import LinkClient
from melgui.remote.remote_hooks import RemoteHooks
from melgui.remote.remote_tools import PendingRemoteTools, RemoteTools
from melgui.remote.target import parse_folder
from melgui.ui.panes.manager import AcpFactory, PaneManager, WorkerFactory, WorkerSpec
from melgui.ui.panes.remote.ask_dialog import ask_in_window
from melgui.ui.panes.remote.folder_dialog import (
    RemoteFolderDialog,
    open_in_new_window,
    recent_folders,
    remember_folder,
)
from melgui.ui.panes.remote.link_state import LinkState
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.host_approvals import HostApprovals
from melgui.ui.runtime.sessions import Elsewhere
from melgui.ui.runtime.theme import Colors


def stand_in_for(url: str) -> str:
    """The local folder a remote folder's window keeps its own things in (history, rules):
    melgui's, under its data folder, one per URL."""
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", url.removeprefix("ssh://"))[:60]
    digest = hashlib.sha256(url.encode()).hexdigest()[:8]
    folder = data_dir() / "remote-folders" / f"{name}-{digest}"
    folder.mkdir(parents=True, exist_ok=True)
    trust = FolderTrust()
    if not trust.asked(str(folder)):  # melgui's own empty folder: nothing in it runs
        trust.set(str(folder), True)
    return str(folder)


def local_model(what: str) -> str:
    """Why a loop cannot run there: `what` (`loop_there`) needs a model server."""
    return (
        f"{what} (loop_there), which needs a model server; this window's model is a local "
        "one, on this machine"
    )


@dataclass(frozen=True, slots=True)
class There:
    """melgui's host on a remote folder's machine, for its main conversation: its client
    over the folder's link, the folder there, the host's name (`me@build`), and what its
    sessions are opened with beside the window's connection (the host's sandbox, env)."""

    client: LinkClient
    folder: str
    where: str
    settings: dict[str, Any] = field(default_factory=dict)  # the host's sandbox and env


class Leaves(Protocol):
    """The window's view of the host there (HostView): told when the window closes."""

    async def leave(self) -> None: ...


# The window made a view of the host there, once reached (None: the loop stays here).
Attach = Callable[[Awaitable[There | None]], Awaitable[Leaves | None]]


class TrustShown(Protocol):
    """The window's trust bar (melgui/ui/window/trust_bar.py): whose folder it asks
    about, and its `changed(trusted)` signal."""

    changed: Any

    def set_folder(self, folder: str) -> None: ...


class RemoteSide:
    """The window's hosts (RemotePlaces for its panes) and its remote folder, if any."""

    def __init__(
        self,
        panes: PaneManager,
        desk: Desk,
        hosts: Sequence[RemoteHost],
        *,
        model: Callable[[], str],
        status: QStatusBar,
        colors: Colors,
        opened: Callable[[str, Elsewhere], None],
        parent: QWidget,
        say: Callable[[str], None] | None = None,
        trust: TrustShown | None = None,
    ) -> None:
        self.panes = panes
        self._say = say
        self.desk = desk
        self._model = model
        self.status = status
        self._opened = opened
        self.parent_widget = parent
        self.indicator = LinkState(status, colors)
        status.addPermanentWidget(self.indicator)
        self.hosts = RemoteHosts(
            list(hosts),
            ask=self._ask,
            on_state=self.indicator.show_state,
            host_argv=given_host_argv(),
        )
        self.hosts.on_note = self._note
        self.hosts.show_in(desk.mcp_there)  # the MCP panel lists the servers there
        self.folder: asyncio.Future[Place] | None = None
        self.url = ""
        self._acp_here = panes.acp_factory  # ACP panes here (before a remote folder's)
        self._clients: dict[str, LinkClient] = {}  # per host whose workers' loops run there
        self._approvals: HostApprovals | None = None  # sent to those workers there
        # Those workers' sessions: quitting offers to keep them running there (the
        # window's QuitGuard.elsewhere), as the melgui host's are kept here.
        self.there_sessions: weakref.WeakSet[RemoteSession] = weakref.WeakSet()
        self.view: Leaves | None = None  # the host there, when the main conversation is its
        # The window's trust bar: a remote folder's is asked for its URL, and gates its
        # language servers there.
        self.trust = trust
        if trust is not None:
            trust.changed.connect(self.trust_changed)

    def set_colors(self, colors: Colors) -> None:
        self.indicator.set_colors(colors)

    # -- RemotePlaces (melgui/ui/panes/manager.py) --------------------------------------

    def names(self) -> list[str]:
        return self.hosts.names()

    def describe(self) -> str:
        return self.hosts.describe()

    async def place(self, name: str) -> Place:
        return await self.hosts.place(name)

    def worker_factory(self, place: Place) -> WorkerFactory:
        desk = self.desk
        host = self.hosts.hosts.get(place.name)
        if host is not None and host.loop_there:
            return self._loop_there(place)

        def make(spec: WorkerSpec) -> AgentSession:
            folder = spec.folder or place.folder  # its own worktree there, if it has one
            return desk.worker_session(
                model=spec.model or self._model(),
                source=spec.source,
                tools=RemoteTools(place.link, folder, options=place.options, mcp=place.mcp),
                cwd=folder,
                catalog=CatalogThere(place.mcp, desk.catalog),
            )

        return make

    def _loop_there(self, place: Place) -> WorkerFactory:
        """Workers whose loop runs on the host too (its `loop_there`): a session in
        melgui's host there, opened with this window's connection and key (kept in that
        host's memory only), shown here as the worker panes of a local host are."""
        client = self.client_of(place)
        desk = self.desk
        if self._approvals is None:  # the window's approval settings, sent to each
            self._approvals = HostApprovals(desk)

        def make(spec: WorkerSpec) -> AgentSession:
            settings = desk.settings
            if settings.connection == "local":
                raise ValueError(local_model(f"{place.name} runs its workers' loops there"))
            session: Any = RemoteSession.start(
                client,
                folder=place.folder,
                model=spec.model or self._model(),
                source=spec.source,
                settings={
                    "connection": settings.connection,
                    "relay_url": settings.relay_url,
                    "relay_stream_path": settings.relay_stream_path,
                    "openai_base_url": settings.openai_base_url,
                    **place.loop_settings,  # its commands: the host's sandbox and env
                },
                api_key=desk.api_key or "",  # none: not that machine's own either
                worktree=spec.worktree,  # its own, made there (its host's session opens in it)
            )
            assert self._approvals is not None
            self._approvals.track(session)  # it asks there as this window would
            self.there_sessions.add(session)
            return session  # the surface the worker pane uses of an AgentSession

        return make

    # -- Keep running in the background (QuitGuard.elsewhere) -----------------------------

    def offered(self) -> bool:
        """A worker whose loop runs there is mid-turn (or waits for an answer)."""
        return any(session.busy and not session.problem for session in self.there_sessions)

    def keep_running(self) -> None:
        """Closing the window leaves those workers to the host there (`session/detach`,
        not `session/close`): their turns go on there, and the next window on a remote
        folder reopens them in panes (HostView.reopen_running)."""
        for session in self.there_sessions:
            session.keep_running = True

    def client_of(self, place: Place) -> LinkClient:
        """The one client of the host on `place`'s link: its sessions (workers' and the
        main conversation's) share it, as they share the link's connection."""
        client = self._clients.get(place.name)
        if client is None or client.link is not place.link:
            client = self._clients[place.name] = LinkClient(place.link)
        return client

    # -- a remote folder -----------------------------------------------------------------

    def open_folder(self, url: str) -> None:
        """This window is `url`'s: its chat's workspace tools, terminals and workers run
        there from now on (the link connects in the background; calls made before wait)."""
        target = parse_folder(url)
        name = target.label
        self.url = url
        mine = configured_for(list(self.hosts.hosts.values()), target)  # its host's settings
        self.hosts.add(RemoteHost(
            name=name, target=url, loop_there=bool(mine and mine.loop_there),
            sandbox=mine.sandbox if mine else None, env=dict(mine.env) if mine else {},
        ))  # fmt: skip
        self.hosts.every_mcp.add(name)
        self.desk.mcp_elsewhere = True  # the person's MCP servers run there, not here
        self.indicator.show_state(name, "connecting")
        folder = asyncio.ensure_future(self.hosts.place(name))
        self.folder = folder
        folder.add_done_callback(self._reached)
        self.panes.home = name
        self._agents_there(folder, target.path)
        if self.trust is not None:
            self.trust.set_folder(folder_key(target))
        local, there, hooks = self.desk.tools, self.hosts.catalog(name), self._hooks(folder, url)
        self._opened(url, lambda: (
            PendingRemoteTools(folder, local=local, mcp=there, hooks=hooks), target.path,
            CatalogThere(there, self.desk.catalog),
        ))  # fmt: skip

    def take_main(self, attach: Attach, tasks: TaskKeeper) -> None:
        """The window's main conversation runs in melgui's host there from when the link
        is open, when the folder's host says `loop_there`: `attach` makes the window that
        host's view (melgui/ui/window/host_view/view.py `attach_there`)."""
        reach = self.main_there()
        if reach is not None:
            tasks.spawn(self._attach(attach, reach), what=f"the loop on {self.url}")

    async def _attach(self, attach: Attach, reach: Awaitable[There | None]) -> None:
        self.view = await attach(reach)

    def main_there(self) -> Awaitable[There | None] | None:
        """Where this remote folder's main conversation runs its loop, when its host's
        settings say `loop_there`: melgui's host there, over the folder's link (None: the
        loop stays here). Awaited: the host there's client, once the link is open (None:
        it could not open, said already); a local model raises ValueError saying why."""
        folder = self.folder
        if folder is None or not self.hosts.hosts[parse_folder(self.url).label].loop_there:
            return None

        async def reach() -> There | None:
            try:
                place = await asyncio.shield(folder)
            except (LinkError, asyncio.CancelledError):
                return None  # said in the status bar (`_reached`)
            if self.desk.settings.connection == "local":
                raise ValueError(local_model(f"{place.name} runs this folder's loop there"))
            return There(self.client_of(place), place.folder, place.name, place.loop_settings)

        return reach()

    def _hooks(self, folder: asyncio.Future[Place], url: str) -> RemoteHooks:
        """The folder's own hooks, run there while the person trusts it by its URL (the
        trust bar's), as its language servers there are."""

        async def reach() -> tuple[Link, str]:
            place = await asyncio.shield(folder)
            return place.link, place.folder

        trust = FolderTrust()
        key = folder_key(parse_folder(url))
        return RemoteHooks(reach, trusted=lambda: trust.is_trusted(key), where=url)

    def trust_changed(self, trusted: bool) -> None:
        """The person trusted (or restricted) this window's remote folder (the trust bar,
        keyed by its URL): its language servers there run (or stop checking) from the
        next call."""
        if self.url:
            self.hosts.set_trusted(parse_folder(self.url).label, trusted)

    def _agents_there(self, folder: asyncio.Future[Place], path: str) -> None:
        """ACP agent panes run their agent there, in the folder (their pane, rules and
        permissions here), and its file and terminal requests act there."""
        if self._acp_here is None:
            return

        async def link() -> Link:
            return (await asyncio.shield(folder)).link

        self.panes.acp_factory = self._agent_there(link, path, self._hooks(folder, self.url))

    def agent_factory(self, place: Place) -> AcpFactory:
        """ACP agent panes on a configured host: the agent runs there, in its folder, with
        its hooks there (a configured host's run: the person named that folder)."""

        async def link() -> Link:
            return place.link

        hooks = RemoteTools(place.link, place.folder, options=place.options).hooks_there()
        return self._agent_there(link, place.folder, hooks)

    def _agent_there(
        self, link: Callable[[], Awaitable[Link]], path: str, hooks: RemoteHooks
    ) -> AcpFactory:
        make_here = self._acp_here
        from melgui.remote.remote_agent import AgentThere  # the ACP SDK: ~20 MiB, 0.4 s

        there = AgentThere(link, path, self.desk.checkpoint_there())  # its writes, too

        def make(command: AgentCommand, title: str, resume: str | None) -> HostedAgentSession:
            if make_here is None:
                raise LinkError("ACP agents are not available in this window")
            session = make_here(command, title, resume)
            if not isinstance(session, HostedAgentSession):  # one the melgui host runs
                raise LinkError("an agent the melgui host runs cannot run on another machine")
            host = session.host
            host.gate.hooks = self.desk.hooks_for(path, hooks)  # its PreToolUse hooks there
            terminals = there.terminals(host.terminals.on_open, host.terminals.refusal)
            host.run_there(path, there.spawn, there.files(host.source), terminals)
            return session

        return make

    def _reached(self, folder: asyncio.Future[Place]) -> None:
        if folder.cancelled():
            return
        error = folder.exception()
        name = parse_folder(self.url).label
        if error is None:
            remember_folder(self.url)
            return
        self.indicator.show_state(name, "lost")
        why = str(error) if isinstance(error, LinkError) else repr(error)
        self.status.showMessage(f"Cannot open {self.url}: {why}", 60000)

    # -- the person ----------------------------------------------------------------------

    def _note(self, host: str, line: str) -> None:
        """An MCP server that did not start on a host: said whole (`say`; the status bar
        cuts a long line), and in the status bar."""
        if self._say is not None:
            self._say(line)
        self.status.showMessage(line, 60000)

    async def _ask(self, question: Question) -> str | None:
        return await ask_in_window(self.parent_widget, question)

    def ask_folder(self) -> RemoteFolderDialog:
        dialog = RemoteFolderDialog(recent_folders(), open_in_new_window, self.parent_widget)
        dialog.open()
        return dialog

    async def aclose(self) -> None:
        if self.view is not None:  # the main conversation there: told before the link closes
            await self.view.leave()
        if self.folder is not None and not self.folder.done():
            self.folder.cancel()
        await self.hosts.aclose()
