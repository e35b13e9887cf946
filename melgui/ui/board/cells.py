"""What each column of the agents board says about an agent, in words."""

from __future__ import annotations

import time

from melgui.core.protocol.views.board_rows import AgentRow, AgentState
from melgui.ui.runtime.look.tokens import LIGHT

COLUMNS = ("Agent", "State", "Branch", "Files changed", "Tokens", "Overlaps")

STATE_LABEL: dict[AgentState, str] = {
    "running": "running",
    "waiting": "waiting for approval",
    "idle": "idle",
    "finished": "finished",
    "failed": "failed",
}

STATE_COLOUR: dict[AgentState, str] = {
    "running": LIGHT.ok,
    "waiting": LIGHT.pending,
    "idle": LIGHT.muted,
    "finished": LIGHT.accent,
    "failed": LIGHT.error,
}


def ago(seconds: float) -> str:
    """A duration as people say it: "just now", "4 min", "2 h 5 min"."""
    seconds = max(0.0, seconds)
    if seconds < 60:
        return "just now"
    minutes = int(seconds // 60)
    if minutes < 60:
        return f"{minutes} min"
    return f"{minutes // 60} h {minutes % 60} min"


def state_text(row: AgentRow, now: float | None = None) -> str:
    """E.g. "waiting for approval since 14:02 (3 min)", "failed: HTTP 500"."""
    now = time.time() if now is None else now
    label = STATE_LABEL[row.state]
    if row.state == "waiting":
        clock = time.strftime("%H:%M", time.localtime(row.since))
        many = f" ×{row.waiting}" if row.waiting > 1 else ""
        return f"{label}{many} since {clock} ({ago(now - row.since)})"
    if row.state == "failed" and row.detail:
        return f"{label}: {' '.join(row.detail.split())[:80]}"
    if row.state in ("finished", "idle"):
        return f"{label} · {ago(now - row.since)}" if now - row.since >= 60 else label
    return label


def tokens_text(tokens: int) -> str:
    if tokens >= 10_000:
        return f"{tokens / 1000:.0f}k"
    if tokens >= 1000:
        return f"{tokens / 1000:.1f}k"
    return str(tokens)


def files_text(row: AgentRow) -> str:
    """ "12"; "5000 (1000 listed)" when the host's reading listed only some."""
    if not row.files_unlisted:
        return str(row.files_changed)
    return f"{row.files_changed} ({row.files_changed - row.files_unlisted} listed)"


def cells(row: AgentRow, now: float | None = None) -> tuple[str, ...]:
    """The row's text, one per COLUMNS entry."""
    return (
        row.name,
        state_text(row, now),
        row.branch or "shared folder",
        files_text(row),
        tokens_text(row.tokens),
        f"⚠ {row.overlap}" if row.overlap else "—",
    )
