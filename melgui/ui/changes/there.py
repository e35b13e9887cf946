"""A remote folder's uncommitted changes, read by its host there (`changes/uncommitted`,
docs/host-protocol.md): the Changes view shows them as a local folder's, read-only; the
diff of its last commits or of a branch (`changes/diff`), for `/review` of them; and
a host worker's branch in its worktree there (`worktree/changes`), the same way: its
files and hunks applied onto the folder there or discarded, its branch merged into the
folder there or discarded, each by the host there (`BranchThere`)."""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from typing import Any, Protocol

from melgui.core.protocol.views.review_findings import CUSTOM_PROMPT
from melgui.core.worktrees.changes.diff import FileChange
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import WorktreeChanges
from melgui.core.worktrees.changes.sent import changes_from_json
from melgui.core.worktrees.merge import MergeOutcome
from melgui.remote.link import LinkError


class AsksThere(Protocol):
    """A remote folder's host there, asked about the folder: its tools' (RestoresThere,
    the loop here) or its main conversation's session there (the loop there)."""

    async def ask_there(self, method: str, **params: Any) -> dict[str, Any]:
        """Raises LinkError when the host cannot be asked."""
        ...


async def instructions_there(ask: Awaitable[dict[str, Any]]) -> str:
    """The project's review prompt (`.melgui/review.md`) as the host there read it
    (`fs/read`'s answer); "" when the folder there has none or the host cannot say."""
    try:
        answer = await ask
    except LinkError:  # no such file there (refused by name), or the link down
        return ""
    content = answer.get("content")
    return content if isinstance(content, str) else ""


def review_instructions_there(there: AsksThere) -> Awaitable[str]:
    """A remote folder's review prompt, read in the folder there by its host."""
    return instructions_there(there.ask_there("fs/read", path=CUSTOM_PROMPT))


async def uncommitted_there(there: AsksThere) -> WorktreeChanges:
    """The folder's uncommitted changes there; ChangesError saying why not (no git there,
    no commit yet, the link down)."""
    return await changes_there(there.ask_there("changes/uncommitted"), "the changes there")


async def diff_there(there: AsksThere, target: str) -> str:
    """`target`'s diff in the folder there (`last N`: its last N commits; a branch: what
    it adds), as git there wrote it; ChangesError saying why not (git's words, the link
    down)."""
    try:
        answer = await there.ask_there("changes/diff", target=target)
    except LinkError as exc:
        raise ChangesError(f"Cannot read the diff there: {exc}") from None
    if answer.get("problem"):
        raise ChangesError(str(answer["problem"]))
    return str(answer.get("text") or "")


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
