"""A call in a few words, and its status in words and colour (no Qt here)."""

from __future__ import annotations

from typing import Literal

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


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)} min {seconds % 60:.0f} s"
