"""A remote folder's uncommitted changes, read by its host there (`changes/uncommitted`,
docs/host-protocol.md): the Changes view shows them as a local folder's, read-only; and
a host worker's branch in its worktree there (`worktree/changes`), the same way."""

from __future__ import annotations

from collections.abc import Awaitable
from typing import Any

from melgui.core.protocol.tooling import RestoresThere
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import WorktreeChanges
from melgui.core.worktrees.changes.sent import changes_from_json
from melgui.remote.link import LinkError


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
