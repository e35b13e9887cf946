"""The card of one tool call: one line (an icon for its kind, what it did in words, a
status pill, a button to open it in the side panel) that expands in place to the change
or the output.

A command that ran and exited non-zero is a failure on its card ("exit 1"), though its
call succeeded (the model reads the code in the result). The run time and the wait for
the person's approval are shown apart. Icons are glyphs of the bundled Lucide icon font
(`icon_img`): cheap to lay out, tinted like text, crisp at any pixel ratio.
"""

from __future__ import annotations

import html
from typing import Any
from urllib.parse import quote

from melgui.core.protocol.call_life import PHASE_LABEL, PHASE_MARK, CallPhase
from melgui.core.protocol.calls import format_duration
from melgui.ui.chat.blocks.call_words import call_line
from melgui.ui.chat.blocks.links import CALL_SCHEME, CARD_SCHEME
from melgui.ui.runtime.look.icons import GLYPH_FAMILY, GLYPHS, KIND_ICONS
from melgui.ui.runtime.look.tokens import ICON, ICON_S, Colors


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


def status_tint(status: CallPhase, colors: Colors) -> str:
    """The pill's background: a tint of its status colour."""
    tints = {
        colors.ok: colors.ok_bg,
        colors.error: colors.error_bg,
        colors.warn: colors.warn_bg,
        colors.pending: colors.pending_bg,
    }
    return tints.get(status_color(status, colors), colors.muted_bg)


def mark_of(status: CallPhase, exit_code: int | None) -> str:
    return PHASE_MARK["error"] if status == "ok" and exit_code else PHASE_MARK[status]


def badge(status: CallPhase, exit_code: int | None, colors: Colors) -> tuple[str, str, str]:
    """(mark, words, colour) of a call's state: a command's non-zero exit is a failure."""
    if status == "ok" and exit_code:
        return PHASE_MARK["error"], f"exit {exit_code}", colors.error
    return PHASE_MARK[status], PHASE_LABEL[status], status_color(status, colors)


def icon_img(name: str, colour: str, size: int = ICON, title: str = "", *more: str) -> str:
    """An icon in the transcript (a glyph of the bundled icon font), `colour` "#rrggbb";
    `title` is its tooltip; `more` icons follow it in the same run of text."""
    tip = f' title="{html.escape(title)}"' if title else ""
    style = f"font-family:{GLYPH_FAMILY}; font-size:{size}px; color:{colour}"
    glyphs = "&nbsp;".join(f"&#x{GLYPHS[n]:X};" for n in (name, *more))
    return f'<span style="{style}"{tip}>{glyphs}</span>'


def pill(words: str, colour: str, tint: str) -> str:
    return (
        f'<span style="background-color:{tint}; color:{colour}; font-size:small">'
        f"&nbsp;{html.escape(words)}&nbsp;</span>"
    )


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
    arguments: dict[str, Any] | None = None,
    body_html: str = "",
    expanded: bool = False,
) -> str:
    """The card's line; under it `extra_html` (checkpoint, hooks, notes) and, when
    `expanded`, `body_html` (the change, the output, the approval)."""
    quoted = quote(call_id, safe="")
    words = call_line(name, arguments, summary, status)
    _mark, label, colour = badge(status, exit_code, colors)
    tint = status_tint(status, colors) if colour != colors.error else colors.error_bg
    ended = status not in ("waiting", "requested", "running")
    if duration is not None and ended and status != "denied":
        label += f" · {format_duration(duration)}"
    if waited and ended:
        label += f" · waited {format_duration(waited)} for approval"
    chevron = "chevron-down" if expanded else "chevron-right"
    counts = (
        f'&nbsp;<span style="color:{colors.muted}">{words.counts}</span>' if words.counts else ""
    )
    line = (
        f'<a href="{CARD_SCHEME}:{quoted}" style="text-decoration:none; color:{colors.text}">'
        f"{icon_img(chevron, colors.muted, ICON_S, '', KIND_ICONS[words.kind])}&nbsp;&nbsp;"
        f"<b>{html.escape(words.verb)}</b>&nbsp;"
        f'<span style="font-family:monospace">{html.escape(words.target)}</span></a>'
        f"{counts}&nbsp;&nbsp;{pill(label, colour, tint)}&nbsp;&nbsp;"
        f'<a href="{CALL_SCHEME}:{quoted}" style="text-decoration:none">'
        f"{icon_img('panel-right', colors.muted, ICON_S, 'Open in the side panel')}</a>"
    )
    return line + extra_html + (body_html if expanded else "")
