"""A worker's own git worktree of a folder here, for a view whose worker runs on this
host (a configured host's worker: its loop and pane elsewhere, its tools here). The
worktree is made here by the rules a local worker's follows (melgui/core/worktrees: the
same folder under this machine's melgui data folder, branch `melgui/<pane>-<task>`, this
machine's copy list and setup command of the folder), read for the view's Changes view,
and removed when the worker's pane closes only as far as the person agreed
(melgui/desk/worktree_losses.py). docs/host-protocol.md: `worktree/…`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from melgui.core.config.settings import Settings
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import read_changes
from melgui.core.worktrees.changes.sent import changes_to_json
from melgui.core.worktrees.create import WorktreeError, repository_of
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import WorkerWorktrees
from melgui.desk.losses import Loss
from melgui.desk.worktree_losses import retire_worktree, worktree_losses
from melgui.host import wire
from melgui.host.records import worktree_from_json, worktree_to_json
from melgui.host.wire import RpcError

if TYPE_CHECKING:
    from melgui.host.server import ViewConnection

Method = Callable[["ViewConnection", dict[str, Any]], Awaitable[Any]]


class WorktreeMethods:
    """`worktree/create`, `worktree/changes`, `worktree/losses`, `worktree/retire`;
    `folder` checks a view's `folder` param (a folder on this host) and gives it."""

    def __init__(
        self, settings: Callable[[], Settings], folder: Callable[[dict[str, Any]], str]
    ) -> None:
        self.settings = settings
        self.folder = folder

    def methods(self) -> dict[str, Method]:
        return {
            "worktree/create": self._create,
            "worktree/changes": self._changes,
            "worktree/losses": self._losses,
            "worktree/retire": self._retire,
        }

    async def _create(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """A new worktree of the folder for worker `pane` given `task`, filled and set up:
        `{worktree, folder (where the worker works), said}`; `{problem}` when the folder
        is not in a git repository with a commit (the worker works in the folder itself)."""
        folder = self.folder(params)
        pane, task, carry = params.get("pane"), params.get("task"), params.get("carry")
        if not isinstance(pane, int) or not isinstance(task, str):
            raise RpcError(wire.INVALID_PARAMS, "worktree/create needs pane (a number) and task")
        try:
            await asyncio.to_thread(repository_of, folder, nice=False)
        except WorktreeError as exc:
            return {"problem": str(exc)}
        worktrees = WorkerWorktrees(folder, self.settings())
        try:
            prepared = await asyncio.to_thread(
                worktrees.create, pane, task, carry=carry if isinstance(carry, bool) else None
            )
        except WorktreeError as exc:
            raise RpcError(wire.INTERNAL_ERROR, str(exc)) from None
        return {
            "worktree": worktree_to_json(prepared.worktree),
            "folder": str(prepared.folder),
            "said": prepared.describe(),
        }

    async def _changes(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """The worker's changes against its base (commits, edits, new files) by file and
        hunk, as `changes/uncommitted` sends a folder's, or `{problem}`."""
        worktree = _worktree(self.folder, params)
        try:
            return {"changes": changes_to_json(await read_changes(worktree))}
        except ChangesError as exc:
            return {"problem": str(exc)}

    async def _losses(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """What removing the worktree would lose (`{losses: [{kind, where, what}]}`), in
        the words closing a local worker's pane asks with."""
        worktree = _worktree(self.folder, params)
        where = str(params.get("where") or "worker")
        losses = await asyncio.to_thread(worktree_losses, worktree, where)
        return {"losses": [{"kind": x.kind, "where": x.where, "what": x.what} for x in losses]}

    async def _retire(self, view: ViewConnection, params: dict[str, Any]) -> Any:
        """Remove the worktree (its worker has stopped) if that loses nothing but what the
        person agreed to (`confirmed`: the `what` of the losses shown): `{removed}`."""
        worktree = _worktree(self.folder, params)
        confirmed = params.get("confirmed") or []
        if not isinstance(confirmed, list) or not all(isinstance(w, str) for w in confirmed):
            raise RpcError(wire.INVALID_PARAMS, "confirmed must be a list of what was shown")
        agreed = [Loss("changes", "", what) for what in confirmed]
        return {"removed": await asyncio.to_thread(retire_worktree, worktree, agreed)}


def _worktree(folder: Callable[[dict[str, Any]], str], params: dict[str, Any]) -> Worktree:
    """The params' `worktree`, one of the params' `folder`'s repository."""
    main = Path(folder(params))
    given = params.get("worktree")
    try:
        worktree = worktree_from_json(given) if isinstance(given, dict) else None
    except (KeyError, TypeError):
        worktree = None
    if worktree is None:
        raise RpcError(wire.INVALID_PARAMS, f"not a worktree: {given!r}")
    if main.resolve() != worktree.main.resolve() and worktree.main.resolve() not in (
        main.resolve().parents
    ):
        raise RpcError(wire.INVALID_PARAMS, f"{worktree.path} is not a worktree of {main}")
    return worktree
