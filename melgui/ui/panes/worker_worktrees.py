"""The pane side of worker worktrees, all git off the GUI thread: making one, reading what
closing its pane would lose before asking, and removing it once its worker has stopped
(only as far as `melgui.desk.worktree_losses` allows). A worktree on another machine
(`there`) is read and removed by the host there, by the same rules."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Protocol

from PySide6.QtWidgets import QMessageBox

from melgui.core.terminal.panes import PaneInfo
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import Prepared, WorkerWorktrees
from melgui.desk.losses import Loss
from melgui.desk.worktree_losses import retire_worktree, worktree_losses
from melgui.remote.worktree_there import WorktreeThere
from melgui.ui.runtime.aio import TaskKeeper


async def wanted(worktrees: WorkerWorktrees | None, choice: bool | None) -> bool:
    """Whether a new worker gets its own worktree (git is asked in a thread)."""
    return worktrees is not None and await asyncio.to_thread(worktrees.wanted, choice)


async def prepare(
    worktrees: WorkerWorktrees, pane_id: int, task: str, carry: bool | None
) -> Prepared:
    """The worktree made, filled and set up in a thread; WorktreeError when it cannot be."""
    return await asyncio.to_thread(worktrees.create, pane_id, task, carry=carry)


def retire_later(
    tasks: TaskKeeper,
    worktree: Worktree,
    ending: asyncio.Task[None] | None,
    discard: list[Loss],
    there: WorktreeThere | None = None,
) -> asyncio.Task[None] | None:
    """Once the worker's session has ended (`ending`), remove its worktree if that loses
    nothing but `discard`; without a running loop, now (one there is kept then: its host
    cannot be asked without a loop)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        if there is None:
            retire_worktree(worktree, discard)
        return None

    async def retire() -> None:
        if ending is not None:
            with contextlib.suppress(Exception):
                await ending
        if there is not None:
            await there.retire(discard)
        else:
            await asyncio.to_thread(retire_worktree, worktree, discard)

    return tasks.spawn(retire(), what=f"removing worktree {worktree.branch}")


async def settle(retiring: list[asyncio.Task[None] | None], timeout: float) -> None:
    """Wait up to `timeout` seconds for worktrees being removed (one not removed by then
    is kept, and its branch)."""
    waiting = [task for task in retiring if task is not None]
    if waiting:
        await asyncio.wait(waiting, timeout=timeout)


class Closing(Protocol):
    """What asking to close a worker's pane uses of the PaneManager."""

    tasks: TaskKeeper
    close_dialog: QMessageBox | None
    close_checks: set[int]

    def info(self, pane_id: int) -> PaneInfo | None: ...

    def pane(self, pane_id: int) -> object | None: ...

    def pane_losses(self, pane_id: int) -> list[Loss]: ...

    def ask_to_close(self, pane_id: int, losses: list[Loss]) -> None: ...


def ask_to_close(
    manager: Closing, pane_id: int, worktree: Worktree, there: WorktreeThere | None = None
) -> None:
    """Read what closing the worker's pane would lose in its worktree (git, in a thread;
    `there`: by the host there), then ask with that and its turn's losses, or close it
    when nothing would be lost."""
    info = manager.info(pane_id)
    where = f"pane {pane_id} ({info.title if info is not None else 'worker'})"
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no loop to wait on (a script): read it here
        if there is not None:  # its host cannot be asked: what it holds is unknown
            unread = Loss("changes", where, f"its worktree {worktree.path} is on {there.host}")
            manager.ask_to_close(pane_id, [*manager.pane_losses(pane_id), unread])
            return
        manager.ask_to_close(
            pane_id, manager.pane_losses(pane_id) + worktree_losses(worktree, where)
        )
        return
    if pane_id in manager.close_checks:
        return  # a second click while git reads: one question is enough
    manager.close_checks.add(pane_id)
    manager.close_dialog = None

    async def check() -> None:
        try:
            if there is not None:
                found = await there.losses(where)
            else:
                found = await asyncio.to_thread(worktree_losses, worktree, where)
        finally:
            manager.close_checks.discard(pane_id)
        if manager.pane(pane_id) is not None:  # not closed meanwhile
            manager.ask_to_close(pane_id, manager.pane_losses(pane_id) + found)

    manager.tasks.spawn(check(), what=f"reading worktree {worktree.branch}")
