"""A call in a few words, from what its tool definition says (no Qt, no tool tables)."""

from __future__ import annotations

from typing import Any

from melgui.core.protocol.catalog import ALL_TOOLS, ToolDef


def shorten(text: str, limit: int = 80) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def summarize(
    name: str, arguments: dict[str, Any] | None, limit: int = 80, tool: ToolDef | None = None
) -> str:
    """E.g. `src/app.py`, `pytest -q`, `pane 2: ls` — what a person needs to recognise it.

    `tool` is the call's definition; built-in tools are found by name.
    """
    if arguments is None:
        return "(arguments are not valid JSON)"
    tool = tool or ALL_TOOLS.get(name)
    properties = tool.parameters.get("properties", {}) if tool else {}
    if "pane" in properties and "pane" in arguments:
        text = arguments.get("text")
        head = f"pane {arguments['pane']}"
        return shorten(f"{head}: {text}" if isinstance(text, str) else head, limit)
    key = tool.summary_argument if tool else None
    value = arguments.get(key) if key else None
    if tool and not value and tool.summary_default:
        value = tool.summary_default
    if isinstance(value, str):
        summary = value
        if tool and tool.counts_lines and isinstance(arguments.get("content"), str):
            lines = arguments["content"].count("\n") + 1
            summary += f" ({lines} line{'s' if lines != 1 else ''})"
        if "layout" in properties and isinstance(arguments.get("layout"), str):
            summary = f"{arguments['layout']}: {summary}"
        return shorten(summary, limit)
    for item in arguments.values():
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            return shorten(str(item), limit)
    return ""


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
