"""The compact inline card of one tool call: tool, short argument summary, status.

A command that ran and exited non-zero is a failure on its card ("✗ exit 1"), though
its call succeeded (the model reads the code in the result). The run time and the wait
for the person's approval are shown apart."""

from __future__ import annotations

import html
from urllib.parse import quote

from melgui.core.protocol.call_life import PHASE_LABEL, PHASE_MARK, CallPhase
from melgui.core.protocol.calls import format_duration
from melgui.ui.chat.blocks.links import CALL_SCHEME
from melgui.ui.runtime.theme import Colors


def status_color(status: CallPhase, colors: Colors) -> str:
    if status == "ok":
        return colors.ok
    if status in ("error", "interrupted"):
        return colors.error
    if status in ("denied", "cancelled"):
        return colors.warn
    if status == "waiting":
        return colors.pending
    return colors.muted


def mark_of(status: CallPhase, exit_code: int | None) -> str:
    return PHASE_MARK["error"] if status == "ok" and exit_code else PHASE_MARK[status]


def badge(status: CallPhase, exit_code: int | None, colors: Colors) -> tuple[str, str, str]:
    """(mark, words, colour) of a call's state: a command's non-zero exit is a failure."""
    if status == "ok" and exit_code:
        return PHASE_MARK["error"], f"exit {exit_code}", colors.error
    return PHASE_MARK[status], PHASE_LABEL[status], status_color(status, colors)


def card_html(
    call_id: str,
    name: str,
    summary: str,
    status: CallPhase,
    colors: Colors,
    duration: float | None = None,
    extra_html: str = "",
    *,
    exit_code: int | None = None,
    waited: float = 0.0,
) -> str:
    href = f"{CALL_SCHEME}:{quote(call_id, safe='')}"
    mark, label, color = badge(status, exit_code, colors)
    ended = status not in ("waiting", "requested", "running")
    if duration is not None and ended and status != "denied":
        label += f" · {format_duration(duration)}"
    if waited and ended:
        label += f" · waited {format_duration(waited)} for approval"
    return (
        f'<a href="{href}" style="text-decoration:none; '
        f'color:{colors.text}"><b>{html.escape(name)}</b></a>'
        f'&nbsp;&nbsp;<span style="color:{colors.muted}; font-family:monospace">'
        f"{html.escape(summary)}</span>"
        f'&nbsp;&nbsp;<span style="color:{color}">{mark} {label}</span>'
        f'&nbsp;&nbsp;<a href="{href}" '
        f'style="font-size:small">inspect</a>'
        f"{extra_html}"
    )
