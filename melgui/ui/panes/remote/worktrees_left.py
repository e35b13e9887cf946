"""Worktrees a closed window left on a host (kept because they held work, or a crash's),
offered at the next start as a local project's are (worktree_recovery's dialog): Open
for review (a worker pane there, on that worktree), Discard (asks, naming what goes;
removed there only if it holds what was shown), or Keep.

Only the hosts worktrees were made on are asked (core/worktrees/hosts_marked), and a
remote folder's own host; a host with none left is forgotten until the next worktree
made there. Each is asked by its host there (`worktree/left`, `worktree/remove`).
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QWidget

from melgui.core.terminal.panes import PaneInfo
from melgui.core.worktrees import hosts_marked
from melgui.core.worktrees.create import WorktreeError
from melgui.core.worktrees.recovery import Found
from melgui.host.records import worktree_from_json, worktree_to_json
from melgui.remote.hosts import Place
from melgui.remote.link import LinkError
from melgui.ui.panes.worker_worktrees import WorktreeThere
from melgui.ui.panes.worktree_recovery import RecoveryDialog, Where

if TYPE_CHECKING:
    from melgui.ui.panes.manager import PaneManager, RemotePlaces

log = logging.getLogger(__name__)


def hosts_to_ask(manager: PaneManager) -> list[str]:
    """The configured hosts worktrees were made on, and a remote folder's own host."""
    if manager.remote is None:
        return []
    known = set(manager.remote.names())
    names = [name for name in hosts_marked.marked() if name in known]
    if manager.home is not None and manager.home not in names:
        names.append(manager.home)
    return names


def owned_there(manager: PaneManager, host: str) -> list[str]:
    """The worktree folders on `host` that open worker panes work in."""
    owned = []
    for info in manager.registry.all():
        there = getattr(manager.pane(info.id), "worktree_there", None)
        if isinstance(there, WorktreeThere) and there.host == host:
            owned.append(str(there.worktree.path))
    return owned


def where_there(
    manager: PaneManager, places: RemotePlaces, place: Place, works_in: dict[str, str]
) -> Where:
    """A host's left worktrees: read, removed and opened there, over its link
    (`works_in`: a worktree's path there -> where a worker on it works)."""

    async def ask(method: str, found: Found, **params: Any) -> dict[str, Any]:
        worktree = worktree_to_json(found.worktree)
        try:
            return await place.link.about_folder(method, place.folder, worktree=worktree, **params)
        except LinkError as exc:
            raise WorktreeError(f"{place.name} cannot be reached: {exc}") from None

    async def holds(found: Found) -> str:
        try:
            answer = await place.link.about_folder("worktree/left", place.folder)
        except LinkError:
            return "work that cannot be read now (the link is down)"
        for item in answer.get("left") or []:
            if item["worktree"]["path"] == str(found.worktree.path):
                return str(item["holds"])
        return "nothing any more (it is gone)"

    async def remove(found: Found, shown: str) -> None:
        answer = await ask("worktree/remove", found, shown=shown)
        if answer.get("problem"):
            raise WorktreeError(str(answer["problem"]))

    def review(found: Found) -> PaneInfo:
        branch = found.worktree.branch
        folder = works_in.get(str(found.worktree.path), str(found.worktree.path))
        there = WorktreeThere(place.link, place.folder, found.worktree, folder, name=place.name)
        info = manager.reserve_worker(
            f"worker {{}} @{place.name}: review {branch[:24]}", place.name
        )
        factory = places.worker_factory(place)
        return manager.open_worker(info, None, None, "tab", found.worktree, factory, there=there)

    return Where(place.name, holds, remove, review)


async def left_there(
    manager: PaneManager, places: RemotePlaces, name: str
) -> tuple[Where, list[tuple[Found, str]]] | None:
    """The worktrees left on host `name`, and how to act on them; None when it cannot be
    reached or asked (said in the log: nothing is offered, nothing is lost)."""
    try:
        place = await places.place(name)
        answer = await place.link.about_folder(
            "worktree/left", place.folder, owned=owned_there(manager, name)
        )
    except LinkError as exc:
        log.warning("Cannot ask %s for the worktrees left there: %s", name, exc)
        return None
    if answer.get("problem"):
        log.warning("%s: %s", name, answer["problem"])
        return None
    works_in: dict[str, str] = {}
    left = []
    for item in answer.get("left") or []:
        worktree = worktree_from_json(item["worktree"])
        found = Found(worktree, str(item.get("task", "")), bool(item.get("missing")))
        works_in[str(worktree.path)] = str(item.get("folder") or worktree.path)
        left.append((found, str(item.get("holds", ""))))
    return where_there(manager, places, place, works_in), left


async def offer_left_there(manager: PaneManager, parent: QWidget) -> list[RecoveryDialog]:
    """One dialog per host that has worktrees left there; a host with none is forgotten."""
    dialogs: list[RecoveryDialog] = []
    places = manager.remote
    if places is None:
        return dialogs
    for name in hosts_to_ask(manager):
        found = await left_there(manager, places, name)
        if found is None:
            continue
        where, left = found
        if not left:
            hosts_marked.unmark(name)
            continue
        try:
            dialog = RecoveryDialog(manager, left, parent, where)
        except RuntimeError:  # the window went away before this ran
            return dialogs
        dialog.setAttribute(Qt.WidgetAttribute.WA_DeleteOnClose)
        manager.recovery_dialog = dialog
        dialog.open()
        dialogs.append(dialog)
    return dialogs


def offer_there_soon(manager: PaneManager, parent: QWidget) -> None:
    """Start `offer_left_there` on the running loop (from a Qt slot), as worktree_recovery's
    offer_soon does for this machine's."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:  # no event loop runs: no window to offer them in
        return
    manager.tasks.spawn(offer_left_there(manager, parent), what="finding worktrees left there")
