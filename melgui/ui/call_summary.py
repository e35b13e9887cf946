"""A call in a few words, and its status in words and colour (no Qt here)."""

from __future__ import annotations

import json
from typing import Any, Literal

CallStatus = Literal[
    "requested", "pending", "running", "ok", "denied", "error", "cancelled", "interrupted"
]

STATUS_LABEL: dict[CallStatus, str] = {
    "requested": "queued",
    "pending": "waiting for approval",
    "running": "running",
    "ok": "done",
    "denied": "denied",
    "error": "failed",
    "cancelled": "cancelled",
    "interrupted": "interrupted",
}

STATUS_ICON: dict[CallStatus, str] = {
    "requested": "○",
    "pending": "◆",
    "running": "◐",
    "ok": "✓",
    "denied": "⊘",
    "error": "✗",
    "cancelled": "■",
    "interrupted": "!",
}

DECISION_LABEL: dict[str, str] = {
    "auto": "ran without asking",
    "approved": "approved once",
    "approved:session": "approved for this conversation",
    "approved:saved": "approved (saved rule)",
    "denied": "denied by you",
}

_KEY_ARGUMENT = {
    "read_file": "path",
    "list_dir": "path",
    "grep": "pattern",
    "find_files": "pattern",
    "write_file": "path",
    "edit_file": "path",
    "run_command": "command",
    "web_search": "query",
    "write_plan": "title",
    "create_pdf": "output_path",
    "remember": "note",
    "open_pane": "command",
    "spawn_agent": "task",
}


def parse_arguments(raw: str) -> dict[str, Any] | None:
    """The call's arguments as an object, or None when they are not a JSON object."""
    try:
        value = json.loads(raw) if raw.strip() else {}
    except json.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None


def shorten(text: str, limit: int = 80) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


def summarize(name: str, arguments: dict[str, Any] | None, limit: int = 80) -> str:
    """E.g. `src/app.py`, `pytest -q`, `pane 2: ls` — what a person needs to recognise it."""
    if arguments is None:
        return "(arguments are not valid JSON)"
    if "pane" in arguments and name in ("send_keys", "send_agent", "read_pane", "read_agent"):
        text = arguments.get("text")
        head = f"pane {arguments['pane']}"
        return shorten(f"{head}: {text}" if isinstance(text, str) else head, limit)
    key = _KEY_ARGUMENT.get(name)
    value = arguments.get(key) if key else None
    if name == "list_dir" and not value:
        value = "."
    if name == "open_pane" and not value:
        value = "login shell"
    if isinstance(value, str):
        summary = value
        if name == "write_file" and isinstance(arguments.get("content"), str):
            lines = arguments["content"].count("\n") + 1
            summary += f" ({lines} line{'s' if lines != 1 else ''})"
        if name in ("open_pane", "spawn_agent") and isinstance(arguments.get("layout"), str):
            summary = f"{arguments['layout']}: {summary}"
        return shorten(summary, limit)
    for item in arguments.values():
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            return shorten(str(item), limit)
    return ""


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"
