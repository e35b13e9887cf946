"""The compact inline card of one tool call: tool, short argument summary, status."""

from __future__ import annotations

import html
from urllib.parse import quote

from melgui.ui.call_summary import STATUS_ICON, STATUS_LABEL, CallStatus, format_duration
from melgui.ui.chat.transcript import CALL_SCHEME
from melgui.ui.theme import Colors


def status_color(status: CallStatus, colors: Colors) -> str:
    if status == "ok":
        return colors.ok
    if status in ("error", "interrupted"):
        return colors.error
    if status in ("denied", "cancelled"):
        return colors.warn
    if status == "pending":
        return colors.pending
    return colors.muted


def card_html(
    call_id: str,
    name: str,
    summary: str,
    status: CallStatus,
    colors: Colors,
    duration: float | None = None,
) -> str:
    color = status_color(status, colors)
    href = f"{CALL_SCHEME}:{quote(call_id, safe='')}"
    label = STATUS_LABEL[status]
    if duration is not None and status not in ("pending", "requested", "running"):
        label += f" · {format_duration(duration)}"
    return (
        f'<a href="{href}" style="text-decoration:none; '
        f'color:{colors.text}"><b>{html.escape(name)}</b></a>'
        f'&nbsp;&nbsp;<span style="color:{colors.muted}; font-family:monospace">'
        f"{html.escape(summary)}</span>"
        f'&nbsp;&nbsp;<span style="color:{color}">{STATUS_ICON[status]} {label}</span>'
        f'&nbsp;&nbsp;<a href="{href}" '
        f'style="font-size:small">inspect</a>'
    )
