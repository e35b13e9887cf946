"""list_dir: one folder, folders first, with sizes; capped, and never following links."""

from __future__ import annotations

import asyncio
import heapq
import os
from collections.abc import Iterator
from dataclasses import dataclass

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.definition import Tool
from melgui.core.protocol.tools.files import LIST_DIR
from melgui.tools.context import ToolContext
from melgui.tools.workspace import Workspace


def human_size(size: int) -> str:
    if size < 1024:
        return f"{size} B"
    value = float(size)
    for unit in ("KB", "MB", "GB", "TB"):
        value /= 1024
        if value < 1024 or unit == "TB":
            return f"{value:.1f} {unit}"
    return f"{size} B"  # pragma: no cover - the loop always returns


def _describe(entry: os.DirEntry[str]) -> tuple[int, str, str]:
    """(sort group, name, line) for one entry; stat never follows a symlink."""
    try:
        if entry.is_symlink():
            try:
                target = os.readlink(entry.path)
            except OSError:
                target = "?"
            return (2, entry.name, f"link  {entry.name} -> {target}")
        if entry.is_dir(follow_symlinks=False):
            return (0, entry.name, f"dir   {entry.name}/")
        info = entry.stat(follow_symlinks=False)
        if entry.is_file(follow_symlinks=False):
            return (1, entry.name, f"file  {entry.name}  ({human_size(info.st_size)})")
        return (3, entry.name, f"other {entry.name}  (special file)")
    except OSError as exc:
        return (3, entry.name, f"?     {entry.name}  ({exc.strerror or exc})")


def list_folder(workspace: Workspace, raw_path: str, cap: int) -> str:
    folder = workspace.existing_dir(raw_path)
    shown = workspace.display(folder)
    total = 0

    def entries() -> Iterator[tuple[int, str, str]]:
        nonlocal total
        with os.scandir(folder) as scan:
            for entry in scan:
                total += 1
                yield _describe(entry)

    try:
        # Only `cap` entries are ever held, however many the folder has.
        kept = heapq.nsmallest(cap, entries(), key=lambda item: (item[0], item[1]))
    except OSError as exc:
        raise ToolError(f"Cannot list {raw_path!r}: {exc.strerror or exc}.") from None
    if total == 0:
        return f"{shown}/: empty folder."
    header = f"{shown}/: {total} entr{'y' if total == 1 else 'ies'}"
    lines = [header, *(line for _, _, line in kept)]
    if total > len(kept):
        lines.append(
            f"[Capped: showing {len(kept)} of {total} entries (folders first, then by name).]"
        )
    return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class ListDirInput:
    path: str = "."


async def list_dir(context: ToolContext, given: ListDirInput) -> ToolOutcome:
    limit = context.settings.list_max_entries
    text = await asyncio.to_thread(list_folder, context.workspace, given.path or ".", limit)
    return ToolOutcome(text)


LIST_DIR_TOOL = Tool(LIST_DIR, ListDirInput, list_dir)
