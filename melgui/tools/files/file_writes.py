"""write_file and edit_file: confined, folders created as needed, nothing written on error."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.definition import Tool
from melgui.core.protocol.tools.files import EDIT_FILE, WRITE_FILE
from melgui.tools.context import ToolContext
from melgui.tools.files.file_changes import encode_text, plan_edit
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


@dataclass(frozen=True, slots=True)
class WriteFileInput:
    path: str
    content: str


async def write_file(context: ToolContext, given: WriteFileInput) -> ToolOutcome:
    text = await asyncio.to_thread(_write, context.workspace, given.path, given.content)
    return ToolOutcome(text)


WRITE_FILE_TOOL = Tool(WRITE_FILE, WriteFileInput, write_file)


@dataclass(frozen=True, slots=True)
class EditFileInput:
    path: str
    old_string: str
    new_string: str
    replace_all: bool = False


async def edit_file(context: ToolContext, given: EditFileInput) -> ToolOutcome:
    text = await asyncio.to_thread(
        _edit,
        context.workspace,
        given.path,
        given.old_string,
        given.new_string,
        given.replace_all,
        context.settings.edit_max_bytes,
    )
    return ToolOutcome(text)


EDIT_FILE_TOOL = Tool(EDIT_FILE, EditFileInput, edit_file)
