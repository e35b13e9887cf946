"""write_file and edit_file: confined, folders created as needed, nothing written on error."""

from __future__ import annotations

import asyncio
from typing import Any

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.tools.arguments import optional_bool, require_str
from melgui.tools.files.file_changes import encode_text, plan_edit
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace, write_bytes_confined


def _count_lines(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _write(workspace: Workspace, raw_path: str, content: str) -> str:
    path = workspace.writable_file(raw_path)
    shown = workspace.display(path)
    data = encode_text(content)
    previous = path.stat().st_size if path.exists() else None
    try:
        write_bytes_confined(workspace, path, data)
    except OSError as exc:
        raise ToolError(f"Cannot write {shown!r}: {exc.strerror or exc}.") from None
    size = f"{_count_lines(content)} lines, {len(data):,} bytes"
    if previous is None:
        return f"Created {shown} ({size})."
    return f"Overwrote {shown} ({size}; it had {previous:,} bytes)."


def _edit(
    workspace: Workspace, raw_path: str, old: str, new: str, replace_all: bool, limit: int
) -> str:
    change = plan_edit(workspace, raw_path, old, new, replace_all, limit)
    try:
        write_bytes_confined(workspace, change.path, encode_text(change.after))
    except OSError as exc:
        raise ToolError(f"Cannot write {change.shown!r}: {exc.strerror or exc}.") from None
    if change.replaced == 1:
        return f"Edited {change.shown}: replaced 1 occurrence at line {change.first_line}."
    return (
        f"Edited {change.shown}: replaced {change.replaced} occurrences "
        f"(the first at line {change.first_line})."
    )


async def write_file(
    workspace: Workspace, settings: ToolSettings, arguments: dict[str, Any]
) -> ToolOutcome:
    raw_path = require_str(arguments, "path")
    content = require_str(arguments, "content")
    return ToolOutcome(await asyncio.to_thread(_write, workspace, raw_path, content))


async def edit_file(
    workspace: Workspace, settings: ToolSettings, arguments: dict[str, Any]
) -> ToolOutcome:
    raw_path = require_str(arguments, "path")
    old = require_str(arguments, "old_string")
    new = require_str(arguments, "new_string")
    replace_all = optional_bool(arguments, "replace_all", False)
    text = await asyncio.to_thread(
        _edit, workspace, raw_path, old, new, replace_all, settings.edit_max_bytes
    )
    return ToolOutcome(text)
