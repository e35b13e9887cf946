"""Apply or discard part of a worker's change for a view on another machine: what a host
does when a window's Changes view asks (`worktree/apply`, `worktree/discard_part`).

The view names files by path with a digest of them as it showed them (`shown_digest`);
the host reads the worktree itself and acts on its own reading, only when that is what
the person was shown: nothing the view sends is applied, and a file that changed since
is refused. An apply changes nothing or goes in whole (one `git apply`): a change that
does not fit the folder's files, or that overlaps the person's uncommitted edits there
and does not fit next to them, is refused with the reason and nothing is written. (The
local view can set those edits aside and merge them back in, leaving conflict marks for
the person; there, nobody is at the files to resolve them.)

    applied = await apply_shown(worktree, ["a.txt"], [0], digest)   # one hunk
    applied = await apply_shown(worktree, paths, None, digest)      # files, what is left
"""

from __future__ import annotations

from collections.abc import Sequence

from melgui.core.worktrees.changes.apply import (
    Applied,
    DirtyMainFolder,
    Part,
    apply_parts,
    still_to_apply,
)
from melgui.core.worktrees.changes.diff import FileChange
from melgui.core.worktrees.changes.discard import Discarded, discard_part
from melgui.core.worktrees.changes.git import ChangesError
from melgui.core.worktrees.changes.landed import hunks_in_main
from melgui.core.worktrees.changes.reading import read_changes
from melgui.core.worktrees.changes.sent import shown_digest
from melgui.core.worktrees.model import Worktree


async def as_shown(worktree: Worktree, paths: Sequence[str], shown: str) -> list[FileChange]:
    """The worktree's changes to `paths` as read now, if they are what the view showed
    (`shown`: their digest); ChangesError saying to look again when not."""
    if not paths:
        raise ChangesError("No file was chosen: nothing done.")
    changes = await read_changes(worktree)
    now = {change.path: change for change in changes.files}
    gone = [path for path in paths if path not in now]
    if gone:
        raise ChangesError(
            f"Nothing done: the worker's change to {', '.join(gone[:8])} is not in its "
            "worktree any more. Refresh to see what it holds now."
        )
    files = [now[path] for path in paths]
    if shown_digest(files) != shown:
        raise ChangesError(
            f"Nothing done: the worker changed {_listed(paths)} since you were shown it. "
            "Look at it again (Refresh) and choose again."
        )
    return files


def _chosen(change: FileChange, hunks: Sequence[int]) -> list[int]:
    chosen = sorted(set(hunks))
    if not chosen or chosen[0] < 0 or chosen[-1] >= len(change.hunks):
        raise ChangesError(f"{change.path} has no such hunk: nothing done.")
    return chosen


async def apply_shown(
    worktree: Worktree, paths: Sequence[str], hunks: Sequence[int] | None, shown: str
) -> Applied:
    """Apply the worker's change to `paths` (with `hunks`: those hunks of the one file;
    none: what of the files the folder does not have yet) to the main folder, as shown;
    all or nothing, never under the person's uncommitted edits."""
    files = await as_shown(worktree, paths, shown)
    parts: list[Part]
    if hunks is not None:
        if len(files) != 1:
            raise ChangesError("Hunks are chosen in one file: nothing done.")
        parts = [(files[0], _chosen(files[0], hunks))]
    else:
        parts = await still_to_apply(worktree, files)
    try:
        return await apply_parts(worktree, parts)
    except DirtyMainFolder as refused:
        raise ChangesError(
            f"Not applied: the worker's change overlaps your uncommitted edits to "
            f"{_listed(refused.paths)} in {worktree.main}, and does not fit next to them. "
            "Nothing changed there. Commit those edits there (or set them aside) and apply "
            "again, or use Merge branch…, which sets them aside and puts them back over "
            "the merge, whole or not at all."
        ) from None


async def discard_shown(
    worktree: Worktree, path: str, hunks: Sequence[int] | None, shown: str
) -> Discarded:
    """Undo the worker's change to `path` (or those hunks of it) in its worktree, as shown."""
    (change,) = await as_shown(worktree, [path], shown)
    return await discard_part(worktree, change, None if hunks is None else _chosen(change, hunks))


async def landed_shown(worktree: Worktree, path: str) -> set[int]:
    """The hunks of the worker's change to `path` the main folder has already (none when
    the worktree no longer changes it)."""
    changes = await read_changes(worktree)
    found = [change for change in changes.files if change.path == path]
    return await hunks_in_main(worktree, found[0]) if found else set()


def _listed(paths: Sequence[str]) -> str:
    return ", ".join(paths[:8]) + (" …" if len(paths) > 8 else "")
