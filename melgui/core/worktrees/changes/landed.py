"""Which of a worker's hunks the main folder already has, read from the main folder's
file without starting git: a hunk has landed where its new lines stand together in the
file and its old lines do not."""

from __future__ import annotations

import asyncio
from pathlib import Path

from melgui.core.worktrees.changes.diff import FileChange, Hunk
from melgui.core.worktrees.model import Worktree


async def hunks_in_main(worktree: Worktree, change: FileChange) -> set[int]:
    """Indexes of the hunks of `change` the main folder's file already has."""
    try:
        text = await asyncio.to_thread(_read, worktree.main / change.path)
    except OSError:  # there but unreadable (a folder, no permission): nothing to mark
        return set()
    return landed_hunks(change, text)


def landed_hunks(change: FileChange, text: str | None) -> set[int]:
    """The landed hunks of `change` given the main folder's file (None: there is none)."""
    if change.binary:
        return set()
    everything = set(range(len(change.hunks)))
    if text is None:
        return everything if change.status == "deleted" else set()
    if change.status == "deleted":
        return set()
    lines = text.split("\n")
    if text.endswith("\n"):
        lines.pop()
    positions: dict[str, list[int]] = {}
    for number, line in enumerate(lines):
        positions.setdefault(line, []).append(number)
    return {index for index, hunk in enumerate(change.hunks) if _landed(hunk, lines, positions)}


def _landed(hunk: Hunk, lines: list[str], positions: dict[str, list[int]]) -> bool:
    """The hunk's new lines stand together in the file, anchored as git anchors them: at
    the start when the hunk starts the file, at the end when nothing follows it."""
    after = [line[1:] for line in hunk.lines if line[:1] in (" ", "+")]
    if not after:
        return not lines
    if hunk.old_count == 0 and hunk.old_start == 0:  # a new file: all of it
        return lines == after
    at_start = hunk.new_start <= 1
    at_end = _no_trailing(hunk)
    for start in positions.get(after[0], ()):
        if at_start and start != 0:
            continue
        if at_end and start + len(after) != len(lines):
            continue
        if lines[start : start + len(after)] == after:
            return True
    return False


def _no_trailing(hunk: Hunk) -> bool:
    """No context line after the hunk's last change (it ends the file)."""
    for line in reversed(hunk.lines):
        if line[:1] == "\\":
            continue
        return line[:1] != " "
    return True


def _read(path: Path) -> str | None:
    try:
        return path.read_bytes().decode("utf-8", "surrogateescape")
    except FileNotFoundError:
        return None
