"""A remote folder's uncommitted changes, read by its host there (`changes/uncommitted`,
docs/host-protocol.md): the Changes view shows them as a local folder's, read-only; and
a host worker's branch in its worktree there (`worktree/changes`), the same way: its
files and hunks applied onto the folder there or discarded, its branch merged into the
folder there or discarded, each by the host there (`BranchThere`)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from melgui.core.protocol.tooling import RestoresThere
from melgui.core.protocol.views.review_findings import CUSTOM_PROMPT
from melgui.core.worktrees.changes.diff import FileChange
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import WorktreeChanges
from melgui.core.worktrees.changes.sent import changes_from_json
from melgui.core.worktrees.merge import MergeOutcome
from melgui.remote.link import LinkError


async def instructions_there(ask: Awaitable[dict[str, Any]]) -> str:
    """The project's review prompt (`.melgui/review.md`) as the host there read it
    (`fs/read`'s answer); "" when the folder there has none or the host cannot say."""
    try:
        answer = await ask
    except LinkError:  # no such file there (refused by name), or the link down
        return ""
    content = answer.get("content")
    return content if isinstance(content, str) else ""


def review_instructions_there(there: RestoresThere) -> Awaitable[str]:
    """A remote folder's review prompt, read in the folder there by its host."""
    return instructions_there(there.ask_there("fs/read", path=CUSTOM_PROMPT))


async def uncommitted_there(there: RestoresThere) -> WorktreeChanges:
    """The folder's uncommitted changes there; ChangesError saying why not (no git there,
    no commit yet, the link down)."""
    return await changes_there(there.ask_there("changes/uncommitted"), "the changes there")


async def changes_there(answer: Awaitable[dict[str, Any]], what: str) -> WorktreeChanges:
    """Changes as a host there sends them (`changes/uncommitted`, `worktree/changes`);
    ChangesError saying why not (its `problem`, or the link down: "Cannot read `what`")."""
    try:
        sent = await answer
    except LinkError as exc:
        raise ChangesError(f"Cannot read {what}: {exc}") from None
    if sent.get("problem"):
        raise ChangesError(str(sent["problem"]))
    return changes_from_json(sent["changes"])


class BranchThere(Protocol):
    """A worker's branch in its worktree on another machine, as the Changes view uses it
    (WorktreeThere in ui/panes/worker_worktrees.py): each raises ChangesError saying why
    not, in words."""

    @property
    def host(self) -> str: ...

    async def changes(self) -> WorktreeChanges: ...

    async def merge(self, commit: str | None) -> MergeOutcome: ...

    async def discard(self) -> None: ...

    async def apply(self, files: Sequence[FileChange], hunks: Sequence[int] | None) -> str: ...

    async def discard_part(self, change: FileChange, hunks: Sequence[int] | None) -> str: ...

    async def landed(self, change: FileChange) -> set[int]: ...

    async def review_instructions(self) -> str:
        """The project's review prompt in the worktree there ("" when none)."""
        ...
