"""The compact inline card of one tool call: tool, short argument summary, status."""

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


def card_html(
    call_id: str,
    name: str,
    summary: str,
    status: CallPhase,
    colors: Colors,
    duration: float | None = None,
    extra_html: str = "",
) -> str:
    color = status_color(status, colors)
    href = f"{CALL_SCHEME}:{quote(call_id, safe='')}"
    label = PHASE_LABEL[status]
    if duration is not None and status not in ("waiting", "requested", "running"):
        label += f" · {format_duration(duration)}"
    return (
        f'<a href="{href}" style="text-decoration:none; '
        f'color:{colors.text}"><b>{html.escape(name)}</b></a>'
        f'&nbsp;&nbsp;<span style="color:{colors.muted}; font-family:monospace">'
        f"{html.escape(summary)}</span>"
        f'&nbsp;&nbsp;<span style="color:{color}">{PHASE_MARK[status]} {label}</span>'
        f'&nbsp;&nbsp;<a href="{href}" '
        f'style="font-size:small">inspect</a>'
        f"{extra_html}"
    )
