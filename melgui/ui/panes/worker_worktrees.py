"""The pane side of worker worktrees, all git off the GUI thread: making one, reading what
closing its pane would lose before asking, and removing it once its worker has stopped
(only as far as `melgui.desk.worktree_losses` allows).

A worker on a configured host has its own worktree there (`WorktreeThere`): made, read
and removed by the melgui host there, through the host's link (WorktreeMethods in
melgui/host/folder_methods.py), by the same rules, so two workers on one host never share
a folder and the window's Changes view shows what one changed:

    made = await make_worktree_there(place.link, place.folder, 3, "fix the parser")
    if isinstance(made, str): ...          # why there is none: it works in the folder
    changes = await made.changes()         # its branch against its base, read there
    outcome = await made.merge(None)       # into the folder there, whole or not at all
    said = await made.apply([change], [0]) # one hunk onto the folder there, or nothing
    await made.retire(confirmed)           # when its pane closed, as a local one's

The hosts worktrees were made on are remembered (core/worktrees/hosts_marked), so the
next start asks them for those a closed window left (remote/worktrees_left).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from PySide6.QtWidgets import QMessageBox

from melgui.core.protocol.views.losses import Loss
from melgui.core.protocol.views.review_findings import CUSTOM_PROMPT
from melgui.core.terminal.panes import PaneInfo
from melgui.core.worktrees import hosts_marked
from melgui.core.worktrees.changes.diff import FileChange
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import WorktreeChanges
from melgui.core.worktrees.changes.sent import shown_digest
from melgui.core.worktrees.merge import MergeOutcome
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.workers import Prepared, WorkerWorktrees
from melgui.desk.worktree_losses import retire_worktree, worktree_losses
from melgui.host.records import worktree_from_json, worktree_to_json
from melgui.remote.hosts import Place
from melgui.remote.link import Link, LinkError
from melgui.ui.changes.there import changes_there, instructions_there
from melgui.ui.runtime.aio import TaskKeeper


@dataclass(frozen=True, slots=True)
class WorktreeThere:
    """A worker's worktree on the machine `link` reaches, of that host's `folder`."""

    link: Link
    folder: str  # the host's folder, whose repository the worktree is of
    worktree: Worktree  # its paths are the machine's there
    works_in: str  # where the worker works: the folder's counterpart in the worktree
    said: str = ""  # what went into it (copied, carried, its setup), in words
    name: str = ""  # the host's name in settings ("": its link's label)

    @property
    def host(self) -> str:
        return self.name or self.link.target.label

    async def _ask(self, method: str, **params: Any) -> dict[str, Any]:
        worktree = worktree_to_json(self.worktree)
        return await self.link.about_folder(method, self.folder, worktree=worktree, **params)

    async def changes(self) -> WorktreeChanges:
        """The worker's changes against its base, read there; ChangesError saying why
        not (the worktree gone, the link down)."""
        what = f"the worker's changes on {self.host}"
        return await changes_there(self._ask("worktree/changes"), what)

    async def _act(self, method: str, what: str, **params: Any) -> dict[str, Any]:
        """`method`'s answer; ChangesError with its `problem`, or that the link is down."""
        try:
            answer = await self._ask(method, **params)
        except LinkError as exc:
            raise ChangesError(f"Cannot {what} on {self.host}: {exc}") from None
        if answer.get("problem"):
            raise ChangesError(str(answer["problem"]))
        return answer

    async def merge(self, commit: str | None) -> MergeOutcome:
        """Merge the worker's branch into the folder there, its loose edits committed
        first as `commit` (None: none may be loose), whole or not at all (a conflict
        changes nothing there); ChangesError saying why it did not start."""
        params = {"commit": commit} if commit is not None else {}
        answer = await self._act("worktree/merge", "merge the branch", **params)
        conflicts = tuple(str(path) for path in answer.get("conflicts") or [])
        return MergeOutcome(bool(answer.get("merged")), conflicts, str(answer["message"]))

    async def discard(self) -> None:
        """Put the worktree there back at its base; ChangesError saying why not."""
        await self._act("worktree/discard", "discard the worker's changes")

    async def apply(self, files: Sequence[FileChange], hunks: Sequence[int] | None) -> str:
        """Apply `files` as shown (`hunks`: those of the one file; None: what of them the
        folder there lacks) to the folder there, all or nothing; what was applied, in
        words, or ChangesError saying why nothing was (a conflict, a change since)."""
        answer = await self._act("worktree/apply", "apply the change", **_parts(files, hunks))
        return str(answer["message"])

    async def discard_part(self, change: FileChange, hunks: Sequence[int] | None) -> str:
        """Undo `change` as shown (or those hunks of it) in the worktree there; what was
        discarded, in words, or ChangesError saying why not."""
        params = _parts([change], hunks)
        answer = await self._act("worktree/discard_part", "discard the change", **params)
        return str(answer["message"])

    async def landed(self, change: FileChange) -> set[int]:
        """The hunks of `change` the folder there has already (none when unreadable)."""
        try:
            answer = await self._ask("worktree/landed", path=change.path)
        except LinkError:
            return set()
        return {int(index) for index in answer.get("hunks") or []}

    async def review_instructions(self) -> str:
        """The project's review prompt (`.melgui/review.md`) in the worktree there, read
        by its host ("" when none), for the review of its branch."""
        return await instructions_there(
            self.link.about_folder("fs/read", str(self.worktree.path), path=CUSTOM_PROMPT)
        )

    async def losses(self, where: str) -> list[Loss]:
        """What removing the worktree would lose; when that cannot be read (the link is
        down), a loss saying so: what cannot be read is treated as work."""
        try:
            answer = await self._ask("worktree/losses", where=where)
        except LinkError as exc:
            what = f"its worktree {self.worktree.path} on {self.host} could not be read: {exc}"
            return [Loss("changes", where, what)]
        return [
            Loss("changes", str(loss.get("where", where)), str(loss.get("what", "")))
            for loss in answer.get("losses") or []
        ]

    async def retire(self, confirmed: list[Loss]) -> bool:
        """Remove it there if that loses nothing the person did not agree to; True when
        removed. A link that is down keeps it (and its branch) there."""
        try:
            answer = await self._ask("worktree/retire", confirmed=[x.what for x in confirmed])
        except LinkError:
            return False
        return bool(answer.get("removed"))


def _parts(files: Sequence[FileChange], hunks: Sequence[int] | None) -> dict[str, Any]:
    """The files by path, with their digest as shown, and the hunks chosen (if any)."""
    params: dict[str, Any] = {"paths": [f.path for f in files], "shown": shown_digest(files)}
    if hunks is not None:
        params["hunks"] = list(hunks)
    return params


async def make_worktree_there(
    link: Link,
    folder: str,
    pane_id: int,
    task: str,
    *,
    carry: bool | None = None,
    name: str = "",
) -> WorktreeThere | str:
    """A new worktree of `folder` there for worker `pane_id`, or why the folder has none
    (not in a git repository, no commit yet: the worker then works in the folder). Raises
    LinkError when the host could not make it (said in its words)."""
    params: dict[str, Any] = {"pane": pane_id, "task": task}
    if carry is not None:
        params["carry"] = carry
    answer = await link.about_folder("worktree/create", folder, **params)
    if answer.get("problem"):
        return str(answer["problem"])
    worktree = worktree_from_json(answer["worktree"])
    said = str(answer.get("said", ""))
    made = WorktreeThere(link, folder, worktree, str(answer["folder"]), said, name)
    await asyncio.to_thread(hosts_marked.mark, made.host)  # the next start asks it
    return made


async def wanted(worktrees: WorkerWorktrees | None, choice: bool | None) -> bool:
    """Whether a new worker gets its own worktree (git is asked in a thread)."""
    return worktrees is not None and await asyncio.to_thread(worktrees.wanted, choice)


async def make_there(
    worktrees: WorkerWorktrees | None,
    place: Place,
    pane_id: int,
    task: str,
    own: bool | None,
    carry: bool | None,
) -> tuple[WorktreeThere | None, str]:
    """A worker's own worktree on `place`'s host, made there by the host there (the same
    rules as a local worker's; `own`, `carry`: the person's choice, None: the settings),
    or None and why not in words (its folder there is no git repository). Raises
    LinkError when the host could not make it."""
    settings = worktrees.settings if worktrees is not None else None
    if not (own if own is not None else settings is not None and settings.worker_worktrees):
        return None, ""
    if carry is None and settings is not None:
        carry = settings.worker_carry_changes
    made = await make_worktree_there(
        place.link, place.folder, pane_id, task, carry=carry, name=place.name
    )
    if isinstance(made, str):
        return None, (
            f"No worktree of its own on {place.name}: {made} It works in {place.folder} "
            "there itself, as every worker there without one does."
        )
    return made, ""


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


def retire_there(tasks: TaskKeeper, panes: Iterable[object]) -> list[asyncio.Task[None] | None]:
    """The window closes: workers whose worktree is on another machine stop now, and each
    worktree there goes once its worker stopped, if it holds no work (the host there
    removes it; one holding work stays, with its branch)."""
    retiring: list[asyncio.Task[None] | None] = []
    for pane in panes:
        there = getattr(pane, "worktree_there", None)
        close_worker = getattr(pane, "close_worker", None)
        if isinstance(there, WorktreeThere) and callable(close_worker):
            ending = close_worker()
            retiring.append(retire_later(tasks, there.worktree, ending, [], there))
    return retiring


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
