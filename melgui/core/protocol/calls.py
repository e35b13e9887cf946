"""A call in a few words (its tool definition's summary), an exit code, a duration."""

from __future__ import annotations

from typing import Any

from melgui.core.protocol.catalog import ALL_TOOLS, ToolDef
from melgui.core.protocol.tools.definition import first_value, shorten

__all__ = ["exit_code_of", "format_duration", "shorten", "summarize"]


def summarize(
    name: str, arguments: dict[str, Any] | None, limit: int = 80, tool: ToolDef | None = None
) -> str:
    """E.g. `src/app.py`, `pytest -q`, `pane 2: ls` — what a person needs to recognise it.

    `tool` is the call's definition (its summary); built-in tools are found by name.
    """
    if arguments is None:
        return "(arguments are not valid JSON)"
    tool = tool or ALL_TOOLS.get(name)
    return tool.summarize(arguments, limit) if tool else first_value(arguments, limit)


def exit_code_of(content: str) -> int | None:
    """A command's exit code, from the result's first line "exit_code=N" (run_command's
    result format); None for any other result."""
    first, _, _ = content.partition("\n")
    name, equals, code = first.partition("=")
    if name != "exit_code" or not equals:
        return None
    try:
        return int(code)
    except ValueError:
        return None


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"
