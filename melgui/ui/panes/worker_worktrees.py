"""The pane side of worker worktrees: making one off the GUI thread, and removing it once
its worker has stopped (only as far as `melgui.desk.worktree_losses` allows)."""

from __future__ import annotations

import asyncio
import contextlib

from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import Prepared, WorkerWorktrees
from melgui.desk.coordinator import Loss
from melgui.desk.worktree_losses import retire_worktree
from melgui.ui.aio import TaskKeeper


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
) -> None:
    """Once the worker's session has ended (`ending`), remove its worktree if that loses
    nothing but `discard`; without a running loop, now."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        retire_worktree(worktree, discard)
        return

    async def retire() -> None:
        if ending is not None:
            with contextlib.suppress(Exception):
                await ending
        await asyncio.to_thread(retire_worktree, worktree, discard)

    tasks.spawn(retire(), what=f"removing worktree {worktree.branch}")
