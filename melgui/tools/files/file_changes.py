"""What write_file and edit_file would change, computed before anything is written.

The tools and the approval view's diff (melgui.tools.files.diff_preview) share these, so a
preview refuses exactly what the real call would refuse, with the same message.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

from melgui.core.protocol.tooling import ToolError
from melgui.tools.files.read_file import open_regular_file
from melgui.tools.workspace import Workspace


@dataclass(frozen=True, slots=True)
class PlannedChange:
    path: Path
    shown: str
    before: str | None  # None: the file does not exist yet
    after: str
    replaced: int = 0
    first_line: int = 0
    unshowable: str | None = None  # why `before` could not be loaded (binary, too large)


def load_text(path: Path, shown: str, max_bytes: int) -> str:
    """A text file's content; undecodable bytes survive a round trip (surrogateescape)."""
    with open_regular_file(path, shown) as handle:
        data = handle.read(max_bytes + 1)
    if len(data) > max_bytes:
        raise ToolError(
            f"{shown!r} is larger than {max_bytes:,} bytes; too large to edit here. "
            "Use run_command (sed, a script) instead."
        )
    if b"\x00" in data[:8192]:
        raise ToolError(f"{shown!r} is a binary file; it cannot be edited as text.")
    return data.decode("utf-8", errors="surrogateescape")


def encode_text(text: str) -> bytes:
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:  # a lone surrogate that no file byte produced
        return text.encode("utf-8", errors="replace")


def plan_write(workspace: Workspace, raw_path: str, content: str, max_bytes: int) -> PlannedChange:
    path = workspace.writable_file(raw_path)
    shown = workspace.display(path)
    if not path.exists():
        return PlannedChange(path, shown, None, content)
    try:
        before = load_text(path, shown, max_bytes)
    except ToolError as exc:  # overwriting a binary or huge file is allowed; showing it is not
        return PlannedChange(path, shown, None, content, unshowable=str(exc))
    return PlannedChange(path, shown, before, content)


def apply_edit(
    text: str, old: str, new: str, replace_all: bool, shown: str
) -> tuple[str, int, int]:
    """(new text, replacements, line of the first one), or the ToolError the model gets."""
    if old == "":
        raise ToolError(
            "Argument 'old_string' is empty; to create or overwrite a file use write_file."
        )
    if old == new:
        raise ToolError("old_string and new_string are identical; the edit would change nothing.")
    count = text.count(old)
    if count == 0 and "\r\n" in text and "\n" in old and "\r" not in old:
        # The model usually writes \n; the file keeps Windows line endings.
        crlf_old = old.replace("\n", "\r\n")
        if text.count(crlf_old):
            old, new = crlf_old, new.replace("\r\n", "\n").replace("\n", "\r\n")
            count = text.count(old)
    if count == 0:
        raise ToolError(
            f"old_string was not found in {shown!r} (0 matches). Read the file again and "
            "copy the text exactly, whitespace and indentation included."
        )
    if count > 1 and not replace_all:
        raise ToolError(
            f"old_string matches {count} times in {shown!r}; it must match exactly once. "
            "Include more surrounding lines to make it unique, or set replace_all to true."
        )
    first_line = text.count("\n", 0, text.index(old)) + 1
    result = text.replace(old, new) if replace_all else text.replace(old, new, 1)
    return result, count, first_line


def plan_edit(
    workspace: Workspace,
    raw_path: str,
    old: str,
    new: str,
    replace_all: bool,
    max_bytes: int,
) -> PlannedChange:
    path = workspace.writable_file(raw_path)
    shown = workspace.display(path)
    if not os.path.exists(path):
        raise ToolError(f"No such file: {raw_path!r}. To create a file use write_file.")
    before = load_text(path, shown, max_bytes)
    after, count, first_line = apply_edit(before, old, new, replace_all, shown)
    return PlannedChange(path, shown, before, after, count, first_line)
