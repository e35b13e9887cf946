"""A remote folder's uncommitted changes, read by its host there (`changes/uncommitted`,
docs/host-protocol.md): the Changes view shows them as a local folder's, read-only."""

from __future__ import annotations

from melgui.core.protocol.tooling import RestoresThere
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.reading import WorktreeChanges
from melgui.core.worktrees.changes.sent import changes_from_json
from melgui.remote.link import LinkError


async def uncommitted_there(there: RestoresThere) -> WorktreeChanges:
    """The folder's uncommitted changes there; ChangesError saying why not (no git there,
    no commit yet, the link down)."""
    try:
        answer = await there.ask_there("changes/uncommitted")
    except LinkError as exc:
        raise ChangesError(f"Cannot read the changes there: {exc}") from None
    if answer.get("problem"):
        raise ChangesError(str(answer["problem"]))
    return changes_from_json(answer["changes"])
