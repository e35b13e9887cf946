"""Unified diffs of what write_file and edit_file would do, for the approval view.

These read the file, so callers on an event loop should run them through
`asyncio.to_thread`. A refusal raises the same ToolError the real call would give.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator

from melgui.tools.files.file_changes import PlannedChange, plan_edit, plan_write
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

MAX_DIFF_LINES = 4000
MAX_DIFF_INPUT_CHARS = 4_000_000  # difflib is slow on more; such changes are summarized


def preview_write(workspace: Workspace, path: str, content: str) -> str:
    """The diff write_file(path, content) would make."""
    return render_diff(plan_write(workspace, path, content, ToolSettings().edit_max_bytes))


def preview_edit(workspace: Workspace, path: str, old: str, new: str, replace_all: bool) -> str:
    """The diff edit_file(path, old, new, replace_all) would make."""
    change = plan_edit(workspace, path, old, new, replace_all, ToolSettings().edit_max_bytes)
    return render_diff(change)


def render_diff(change: PlannedChange) -> str:
    if change.unshowable is not None:
        return (
            f"--- a/{change.shown}\n+++ b/{change.shown}\n"
            f"(replaces a file that cannot be shown: {change.unshowable})\n"
            f"(new content: {len(change.after.splitlines())} lines)"
        )
    before = change.before or ""
    if change.before is not None and before == change.after:
        return f"(no changes to {change.shown})"
    if len(before) + len(change.after) > MAX_DIFF_INPUT_CHARS:
        return (
            f"--- a/{change.shown}\n+++ b/{change.shown}\n"
            f"(too large to diff: {len(before):,} → {len(change.after):,} characters)"
        )
    old_name = f"a/{change.shown}" if change.before is not None else "/dev/null"
    lines: list[str] = []
    for line in _diff_lines(before, change.after, old_name, f"b/{change.shown}"):
        if len(lines) == MAX_DIFF_LINES:
            lines.append(f"… (diff cut at {MAX_DIFF_LINES} lines)")
            break
        lines.append(line)
    return "\n".join(lines)


def _diff_lines(before: str, after: str, old_name: str, new_name: str) -> Iterator[str]:
    diff = difflib.unified_diff(
        before.splitlines(keepends=True),
        after.splitlines(keepends=True),
        fromfile=old_name,
        tofile=new_name,
    )
    for line in diff:
        if line.endswith("\n"):
            yield line[:-1].removesuffix("\r")
        else:
            yield line
            if not line.startswith(("---", "+++", "@@")):
                yield "\\ No newline at end of file"
