"""PaneManager: opens, finds and closes panes; the one object the orchestration tools use.

It owns the pane registry (ids, titles, states), the area they are shown in, and the
life of what runs in them: closing a pane ends its process group or worker, and
`shutdown()` ends them all (called when the app quits or the window closes).
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Protocol

from PySide6.QtCore import QObject, QTimer, Signal
from PySide6.QtWidgets import QDialog, QMessageBox

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.protocol.views.losses import Loss
from melgui.core.protocol.views.prompt_source import PromptFor
from melgui.core.terminal.panes import HERE, PaneInfo, PaneRegistry, PaneState
from melgui.core.terminal.pty_session import login_shell
from melgui.core.worktrees.create import WorktreeError
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.recovery import Found
from melgui.core.worktrees.workers import Prepared, WorkerWorktrees
from melgui.desk.worktree_losses import retire_worktree
from melgui.remote.hosts import Place, host_word
from melgui.remote.link import LinkError
from melgui.remote.remote_pty import HostTerminals, TerminalUnavailable
from melgui.ui.panes import worker_worktrees
from melgui.ui.panes.acp_pane import AcpPane, AcpSession
from melgui.ui.panes.agent_pane import AgentPane, ApprovalSink
from melgui.ui.panes.pane_area import PaneArea
from melgui.ui.panes.pane_frame import PaneFrame
from melgui.ui.panes.pane_losses import losses_of, short
from melgui.ui.panes.terminal import elsewhere
from melgui.ui.panes.terminal.pane import CLOSE_GRACE_MS, TerminalPane
from melgui.ui.panes.worker_worktrees import WorktreeThere
from melgui.ui.runtime.aio import TaskKeeper
from melgui.ui.runtime.bridge import BridgeFactory
from melgui.ui.runtime.theme import LIGHT, Colors

Pane = TerminalPane | AgentPane
RETIRE_THERE_S = 5.0  # how long the window's close waits on removing worktrees there


@dataclass(frozen=True, slots=True)
class WorkerSpec:
    """What a worker session is made from; the factory adds connection, tools and policy."""

    model: str | None  # None: the window's current model
    source: str  # the pane's title: names the worker in approvals
    worktree: Worktree | None = None  # its own git worktree; None: the project folder
    folder: str | None = None  # on a host: where it works there (None: the host's folder)


WorkerFactory = Callable[[WorkerSpec], AgentSession]
# (command, pane title, the id of an earlier session to reopen or None)
AcpFactory = Callable[[AgentCommand, str, str | None], AcpSession]
WorktreesSource = Callable[[], WorkerWorktrees | None]


class RemotePlaces(Protocol):
    """Other machines panes can run on (melgui/ui/panes/remote's hosts)."""

    def names(self) -> list[str]: ...

    def describe(self) -> str:
        """For list_panes: the hosts and how to start a worker on one."""
        ...

    async def place(self, name: str) -> Place:
        """The host's link, folder and settings (raises LinkError, saying why)."""
        ...

    def worker_factory(self, place: Place) -> WorkerFactory: ...

    def agent_factory(self, place: Place) -> AcpFactory:
        """ACP agent panes whose agent runs at `place`."""
        ...


class PaneError(Exception):
    """A pane could not be opened; the message is for the model and the person."""


class PaneManager(QObject):
    """All panes of one window. Emits `panesChanged()` when one opens, closes or changes."""

    panesChanged = Signal()

    def __init__(
        self,
        area: PaneArea,
        cwd: str | os.PathLike[str],
        *,
        worker_factory: WorkerFactory | None = None,
        bridge_factory: BridgeFactory | None = None,
        on_approval: ApprovalSink | None = None,
        colors: Colors = LIGHT,
        terminal_env: dict[str, str] | None = None,
        worktrees: WorktreesSource | None = None,
        parent: QObject | None = None,
    ) -> None:
        super().__init__(parent)
        self.area = area
        self.cwd = Path(cwd)
        self.worker_factory = worker_factory
        self.acp_factory: AcpFactory | None = None  # set where ACP agents can be hosted
        self.prompt_for: PromptFor | None = None  # with it: an ACP pane's prompt box
        # open_pane: the ACP agent a command starts, when settings say to open it as one.
        self.agent_for: Callable[[str], AgentCommand | None] = lambda _command: None
        self.bridge_factory = bridge_factory
        self.on_approval = on_approval
        self.colors = colors
        self.terminal_env = terminal_env
        # The project's worker worktrees (None: workers always share the folder).
        self.worktrees: WorktreesSource = worktrees or (lambda: None)
        self.registry = PaneRegistry()
        self._panes: dict[int, Pane] = {}
        self._closing: list[TerminalPane] = []
        self._shut = False
        self._ending: asyncio.Task[None] | None = None
        self.tasks = TaskKeeper()  # workers' closing, which outlives their panes
        self.close_dialog: QMessageBox | None = None  # the last "close this pane?" asked
        self.close_checks: set[int] = set()  # panes whose worktree git reads before asking
        self.recovery_dialog: QDialog | None = None  # the last "worktrees left" offered
        # Other machines workers and terminals can run on (melgui/ui/panes/remote); `home`: the
        # one a remote folder is on, where its terminals open.
        self.remote: RemotePlaces | None = None
        self.home: str | None = None
        self.host: HostTerminals | None = None  # a host's view: the terminals run in the host

    def set_colors(self, colors: Colors) -> None:
        """New panes open in `colors`; open worker panes are redrawn in them."""
        self.colors = colors
        for pane in self._panes.values():
            set_colors = getattr(pane, "set_colors", None)
            if callable(set_colors):
                set_colors(colors)

    # -- queries -----------------------------------------------------------------------

    def pane(self, pane_id: int) -> Pane | None:
        return self._panes.get(pane_id)

    def info(self, pane_id: int) -> PaneInfo | None:
        return self.registry.get(pane_id)

    def panes(self) -> list[tuple[PaneInfo, Pane]]:
        # A worker whose worktree is still being made has an id and no pane yet.
        return [
            (info, self._panes[info.id]) for info in self.registry.all() if info.id in self._panes
        ]

    # -- opening -----------------------------------------------------------------------

    def open_terminal(self, command: str | None, layout: object = "tab") -> PaneInfo:
        """A terminal running `command` (the login shell when None) in the project folder."""
        self._check_open()
        command = command if command and command.strip() else None
        title = short(command) if command else Path(login_shell()).name
        return self.add_terminal(
            TerminalPane(command, self.cwd, env=self.terminal_env), title, layout
        )

    async def start_terminal(self, command: str | None, layout: object = "tab") -> PaneInfo:
        """A terminal where this window's terminals run: on a remote folder's host, in the
        melgui host this window is a view of (by default), or in this window."""
        command = command if command and command.strip() else None
        home, host = self.home, self.host
        there = home or "the melgui host"
        try:
            if home is not None:
                pane = await elsewhere.on_place(await self._places().place(home), command)
            elif host is not None:
                pane = await elsewhere.in_host(host, self.cwd, command, self.terminal_env)
            else:
                return self.open_terminal(command, layout)
        except (LinkError, TerminalUnavailable) as exc:
            raise PaneError(f"Could not open a terminal on {there}: {exc}") from exc
        if self._shut:
            pane.close_now()  # the window closed meanwhile: the program ends with it
        title = short(command) if command else elsewhere.program(pane)
        return self.add_terminal(pane, f"{title} @{home}" if home else title, layout, home or HERE)

    def add_terminal(
        self, pane: TerminalPane, title: str, layout: object, where: str = HERE
    ) -> PaneInfo:
        """Show a terminal pane made elsewhere (one on another machine)."""
        self._check_open()
        info = self.registry.add("terminal", title, where=where)
        self._install(info, pane, layout)
        pane.stateChanged.connect(lambda state, pane_id=info.id: self._on_state(pane_id, state))
        self.registry.set_state(info.id, pane.state)
        return self.registry.get(info.id) or info

    @property
    def closed(self) -> bool:
        return self._shut

    # -- on other machines (their loops here, their tools and programs there) ------------

    def host_of(self, text: str) -> tuple[str | None, str]:
        """A command or task that begins `@NAME ` (a configured host): (NAME, the rest)."""
        return host_word(text, self.remote.names() if self.remote is not None else [])

    def _places(self) -> RemotePlaces:
        if self.remote is None:
            raise PaneError("No other machines are configured (Settings → hosts).")
        return self.remote

    async def _reach(self, places: RemotePlaces, host: str, info: PaneInfo) -> Place:
        """`host`'s place for the pane `info` reserved; the reservation is given back when
        the host cannot be reached or the window closed meanwhile."""
        try:
            place = await places.place(host)
        except LinkError as exc:
            self.registry.remove(info.id)
            raise PaneError(f"Could not reach {host}: {exc}") from exc
        self._still_open(info)
        return place

    def _still_open(self, info: PaneInfo) -> None:
        """A reservation is given back when the window closed while its pane was made."""
        if self._shut:
            self.registry.remove(info.id)
            raise PaneError("The window is closing; no new panes.")

    async def start_remote_worker(
        self, host: str, task: str, model: str | None, layout: object,
        own_worktree: bool | None = None, carry: bool | None = None,
    ) -> PaneInfo:  # fmt: skip
        """A worker on `host`, in its own git worktree there as a local one's (made there),
        or in the folder there (its pane says why)."""
        places = self._places()
        info = self.reserve_worker(f"worker {{}} @{host}: {short(task, 28)}", where=host)
        place = await self._reach(places, host, info)
        try:
            there, note = await worker_worktrees.make_there(
                self.worktrees(), place, info.id, task, own_worktree, carry
            )
        except LinkError as exc:
            self.registry.remove(info.id)
            raise PaneError(f"Could not make the worker's worktree on {host}: {exc}") from exc
        self._still_open(info)  # closed meanwhile: git there keeps the worktree
        return self.open_worker(
            info, task, model, layout, there.worktree if there else None,
            places.worker_factory(place), there=there, note=note,
        )  # fmt: skip

    def spawn_agent(self, task: str, model: str | None, layout: object = "tab") -> PaneInfo:
        """A worker given `task`, on `model` or the current one, in the project folder."""
        self._check_open()
        info = self.reserve_worker(f"worker {{}}: {short(task, 32)}", self.home or HERE)
        return self.open_worker(info, task, model, layout, None)

    async def start_worker(
        self,
        task: str,
        model: str | None,
        layout: object = "tab",
        *,
        own_worktree: bool | None = None,
        carry: bool | None = None,
    ) -> tuple[PaneInfo, Prepared | None]:
        """A worker given `task`, in its own worktree (made off the GUI thread) when the
        project is a git repository and `own_worktree` (None: the setting) says so, else in
        the project folder. Returns the pane and the worktree (None when it shares)."""
        self._check_open()
        host, task = host_word(task, self.remote.names() if self.remote is not None else [])
        host = host or self.home  # a remote folder's workers work there too
        if host is not None:
            opened = self.start_remote_worker(host, task, model, layout, own_worktree, carry)
            return await opened, None
        worktrees = self.worktrees()
        if worktrees is None or not await worker_worktrees.wanted(worktrees, own_worktree):
            return self.spawn_agent(task, model, layout), None
        info = self.reserve_worker(f"worker {{}}: {short(task, 32)}")
        try:
            prepared = await worker_worktrees.prepare(worktrees, info.id, task, carry)
        except WorktreeError as exc:
            self.registry.remove(info.id)
            raise PaneError(str(exc)) from exc
        self._still_open(info)  # closed meanwhile: git keeps it, the next start finds it
        return self.open_worker(info, task, model, layout, prepared.worktree), prepared

    def review_worktree(self, found: Found, layout: object = "tab") -> PaneInfo:
        """A worker pane, with no task, on a worktree left from before (to review)."""
        self._check_open()
        info = self.reserve_worker(f"worker {{}}: review {short(found.worktree.branch, 28)}")
        return self.open_worker(info, None, None, layout, found.worktree)

    def reopen_worker(self, title: str, layout: object = "tab") -> PaneInfo:
        """A worker pane with no task on the session the factory gives (one the melgui
        host kept running while no window was attached: a remote folder's host, `home`)."""
        self._check_open()
        info = self.reserve_worker(f"worker {{}}: {short(title, 32)}", self.home or HERE)
        return self.open_worker(info, None, None, layout, None, reopened=True)

    def reserve_worker(self, title: str, where: str = HERE) -> PaneInfo:
        if self.worker_factory is None:
            raise PaneError("Worker agents are not available in this window (no connection).")
        info = self.registry.add("agent", "worker", where=where)
        self.registry.set_title(info.id, title.format(info.id))
        return self.registry.get(info.id) or info

    def open_worker(
        self,
        info: PaneInfo,
        task: str | None,
        model: str | None,
        layout: object,
        wt: Worktree | None,
        factory: WorkerFactory | None = None,
        *,
        reopened: bool = False,
        there: WorktreeThere | None = None,
        note: str = "",
    ) -> PaneInfo:
        """The worker's pane for a reserved `info`; `factory`: another machine's (`there`:
        its worktree there, `wt` is its; `note`: said first). `reopened` (on a session that
        ran on): a new tab stays behind, its conversation drawn once the pane shows."""
        make = factory or self.worker_factory
        assert make is not None
        try:
            folder = there.works_in if there is not None else None
            session = make(WorkerSpec(model, info.title, wt, folder))
        except Exception as exc:
            self.registry.remove(info.id)
            if there is not None:  # made for it there, holding nothing yet
                worker_worktrees.retire_later(self.tasks, there.worktree, None, [], there)
            raise PaneError(f"Could not start the worker: {exc}") from exc
        bridge = self.bridge_factory(session) if self.bridge_factory is not None else None
        # There, its Changes view's Review asks a session made as it is (reading there).
        review = WorkerSpec(model, f"review of {wt.branch}", wt, folder) if there and wt else None
        pane = AgentPane(
            session,
            task,
            bridge=bridge,
            on_approval=self.on_approval,
            colors=self.colors,
            tasks=self.tasks,
            worktree=wt,
            history_when_shown=reopened,
            there=there,
            note=note,
            reviewer=partial(make, review) if review is not None else None,
        )
        self._install(info, pane, layout, front=not reopened)
        pane.stateChanged.connect(lambda state, pane_id=info.id: self._on_state(pane_id, state))
        self.registry.set_state(info.id, pane.state)
        return self.registry.get(info.id) or info

    def open_agent(
        self,
        command: AgentCommand,
        layout: object = "tab",
        task: str = "",
        resume: str | None = None,
    ) -> PaneInfo:
        """An ACP agent started from `command`, in the project folder; `task` is its first
        message, sent once the agent is ready; `resume` reopens an earlier session."""
        self._check_open()
        if self.acp_factory is None:
            raise PaneError("ACP agents are not available in this window.")
        info = self.registry.add("agent", command.name, where=self.home or HERE)  # runs there
        return self._open_agent(info, command, self.acp_factory, layout, task, resume)

    async def open_remote_agent(
        self, host: str, command: AgentCommand, layout: object = "tab", task: str = ""
    ) -> PaneInfo:
        """An ACP agent whose program runs on configured `host`, in its folder there (its
        pane, rules and approvals here)."""
        self._check_open()
        if self.acp_factory is None:
            raise PaneError("ACP agents are not available in this window.")
        places = self._places()
        info = self.registry.add("agent", command.name, where=host)
        place = await self._reach(places, host, info)
        factory = places.agent_factory(place)
        return self._open_agent(info, command, factory, layout, task, None, f" @{host}")

    def _open_agent(
        self,
        info: PaneInfo,
        command: AgentCommand,
        factory: AcpFactory,
        layout: object,
        task: str,
        resume: str | None,
        suffix: str = "",
    ) -> PaneInfo:
        title = f"{command.name} {info.id}{suffix}"
        self.registry.set_title(info.id, title)
        try:
            session = factory(command, title, resume)
        except Exception as exc:
            self.registry.remove(info.id)
            raise PaneError(f"Could not start the agent: {exc}") from exc
        bridge = self.bridge_factory(session) if self.bridge_factory is not None else None
        pane = AcpPane(
            session,
            task,
            bridge=bridge,
            on_approval=self.on_approval,
            colors=self.colors,
            tasks=self.tasks,
            prompt_for=self.prompt_for,
        )
        self._install(info, pane, layout)
        pane.stateChanged.connect(lambda state, pane_id=info.id: self._on_state(pane_id, state))
        self.registry.set_state(info.id, pane.state)
        pane.start()
        return self.registry.get(info.id) or info

    def _check_open(self) -> None:
        if self._shut:
            raise PaneError("The window is closing; no new panes.")

    def _install(self, info: PaneInfo, pane: Pane, layout: object, front: bool = True) -> None:
        # Its header says the pane's own state: one built on a session a host ran on (a
        # later window's, a reattached one's) is idle, not "running" as a new one starts.
        self.registry.set_state(info.id, pane.state)
        frame = PaneFrame(self.registry.get(info.id) or info, pane)
        frame.closeRequested.connect(self.request_close)
        frame.moveToTabRequested.connect(self.area.move_to_tab)
        self._panes[info.id] = pane
        self.area.add(frame, layout, front=front)
        self.panesChanged.emit()

    def _on_state(self, pane_id: int, state: PaneState) -> None:
        self.registry.set_state(pane_id, state)
        frame = self.area.frame(pane_id)
        if frame is not None:
            frame.show_state(state)
        self.panesChanged.emit()

    # -- what closing would lose -------------------------------------------------------

    def pane_losses(self, pane_id: int) -> list[Loss]:
        """What closing this pane now would end (see `pane_losses.losses_of`)."""
        pane = self._panes.get(pane_id)
        info = self.registry.get(pane_id)
        if pane is None or info is None:
            return []
        # Named with the machine it runs on, when not this one: a worker whose loop runs
        # in melgui's host there goes on there (Keep running) or stops there.
        there = f" on {info.where}" if info.where != HERE else ""
        return losses_of(pane, f"pane {pane_id} ({info.title}){there}")

    def losses(self) -> list[Loss]:
        """Every pane's losses, in pane order (a loss_registry source). Work in a worker's
        worktree is not among them: quitting keeps worktrees, the next start offers them."""
        return [loss for info in self.registry.all() for loss in self.pane_losses(info.id)]

    # -- closing -----------------------------------------------------------------------

    def request_close(self, pane_id: int) -> None:
        """The person's close: asks first when the pane's program or worker is live, or
        its worktree holds work (git reads that in a thread, then this asks)."""
        pane = self._panes.get(pane_id)
        if isinstance(pane, AgentPane) and pane.worktree is not None:
            worker_worktrees.ask_to_close(self, pane_id, pane.worktree, pane.worktree_there)
        else:
            self.ask_to_close(pane_id, self.pane_losses(pane_id))

    def ask_to_close(self, pane_id: int, losses: list[Loss]) -> None:
        """Close the pane, asking first when `losses` is not empty."""
        frame = self.area.frame(pane_id)
        if not losses or frame is None:
            self.close_pane(pane_id)
            return
        from melgui.ui.runtime.quit_guard import ask_about_losses

        confirmed = [loss for loss in losses if loss.kind == "changes"]

        def close() -> None:
            self.close_pane(pane_id, discard=confirmed)

        self.close_dialog = ask_about_losses(
            frame, losses, "Closing this pane would end:", "Close pane", close
        )

    def close_pane(self, pane_id: int, *, discard: list[Loss] | None = None) -> bool:
        """Close a pane and end what runs in it; False when there is no such pane. A worker's
        worktree goes once it has stopped, unless it holds work beyond `discard` (kept)."""
        pane = self._panes.pop(pane_id, None)
        if pane is None:
            return False
        self.registry.remove(pane_id)
        frame = self.area.take(pane_id)
        if isinstance(pane, TerminalPane):
            pane.begin_close()
            self._closing.append(pane)
            QTimer.singleShot(CLOSE_GRACE_MS, lambda: self._finish_close(pane))
        else:
            ending = pane.close_worker()
            if pane.worktree is not None:
                worker_worktrees.retire_later(
                    self.tasks, pane.worktree, ending, discard or [], pane.worktree_there
                )
        if frame is not None:
            if isinstance(pane, TerminalPane):
                pane.setParent(None)  # kept until it has ended
            frame.deleteLater()
        self.panesChanged.emit()
        return True

    def owned_worktrees(self) -> list[Path]:
        """The worktree folders open worker panes work in (on this machine)."""
        panes = [p for p in self._panes.values() if not getattr(p, "worktree_there", None)]
        return [wt.path for pane in panes if (wt := getattr(pane, "worktree", None))]

    def _finish_close(self, pane: TerminalPane) -> None:
        if pane in self._closing:
            self._closing.remove(pane)
            pane.finish_close()
            pane.deleteLater()

    def shutdown(self) -> None:
        """End every pane's program or worker now, without waiting on the GUI thread:
        terminals are hung up (SIGHUP), then killed with what is left of their process
        groups; workers stop with their conversations valid. For a graceful end while the
        event loop runs, await `aclose()` first."""
        if self._shut:
            return
        self._shut = True
        terminals = self._terminals()
        for pane in self._panes.values():
            if isinstance(pane, AgentPane):
                pane.close_worker()
                if pane.worktree is not None and pane.worktree_there is None:
                    retire_worktree(pane.worktree, [])  # only if it holds no work
        for terminal in terminals:
            terminal.begin_close()
            terminal.finish_close()
        self._closing.clear()

    def close_soon(self, grace: float = 0.5) -> None:
        """`aclose` in the background when an event loop runs, else `shutdown` now."""
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            self.shutdown()
            return
        if self._ending is None:
            self._ending = loop.create_task(self._graceful_end(grace), name="ending panes")

    async def aclose(self, grace: float = 0.5) -> None:
        """Hang up every terminal and give its programs `grace` seconds to end on their own
        (the event loop keeps running meanwhile), then end the rest as `shutdown` does."""
        if self._ending is None:
            self._ending = asyncio.get_running_loop().create_task(
                self._graceful_end(grace), name="ending panes"
            )
        await asyncio.shield(self._ending)

    async def _graceful_end(self, grace: float) -> None:
        if self._shut:
            return
        terminals = self._terminals()
        for terminal in terminals:
            terminal.begin_close()
        deadline = asyncio.get_running_loop().time() + grace
        retiring = worker_worktrees.retire_there(self.tasks, self._panes.values())
        while asyncio.get_running_loop().time() < deadline and any(
            t.pty is not None and (t.pty.poll() is None or t.pty.session_pids()) for t in terminals
        ):
            await asyncio.sleep(0.02)
        await worker_worktrees.settle(retiring, RETIRE_THERE_S)
        self.shutdown()

    def _terminals(self) -> list[TerminalPane]:
        terminals = [p for p in self._panes.values() if isinstance(p, TerminalPane)]
        return terminals + [p for p in self._closing if p not in terminals]

    def show_call(self, source: str, call_id: str) -> bool:
        """Bring forward the worker pane named `source` and `call_id` in it (a waiting
        call's card, where it is answered)."""
        for info, pane in self.panes():
            if isinstance(pane, AgentPane) and pane.session.source == source:
                self.area.focus_pane(info.id)
                pane.reveal_call(call_id)
                return True
        return False

    def all_pids(self) -> list[int]:
        """Every process running in a terminal pane (for checks and the status bar)."""
        pids: list[int] = []
        for pane in [*self._panes.values(), *self._closing]:
            if isinstance(pane, TerminalPane) and pane.pty is not None:
                pids.extend(pane.pty.session_pids())
        return pids
