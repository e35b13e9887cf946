"""A configured host's worker in its own git worktree there: made, read and removed by
the melgui host there, through the host's link (melgui/host/worktree_methods.py), so two
workers on one host never share a folder and the window's Changes view shows what one
changed.

    made = await make_worktree_there(place.link, place.folder, 3, "fix the parser")
    if isinstance(made, str): ...          # why there is none: it works in the folder
    changes = await made.changes()         # its branch against its base, read there
    await made.retire(confirmed)           # when its pane closed, as a local one's
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import WorktreeChanges
from melgui.core.worktrees.changes.sent import changes_from_json
from melgui.core.worktrees.model import Worktree
from melgui.desk.losses import Loss
from melgui.host.records import worktree_from_json, worktree_to_json
from melgui.remote.link import Link, LinkError


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
        try:
            answer = await self._ask("worktree/changes")
        except LinkError as exc:
            raise ChangesError(f"Cannot read the worker's changes on {self.host}: {exc}") from None
        if answer.get("problem"):
            raise ChangesError(str(answer["problem"]))
        return changes_from_json(answer["changes"])

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
    return WorktreeThere(link, folder, worktree, str(answer["folder"]), said, name)
