"""The question on a waiting call's card, the one place a person answers it: what will
run (a command's parts as the rules read them, an agent's own diff), the reason being
typed, then Allow and Deny with their keys, "Always allow ▾" (its choices pop up under
it) and "Deny with a reason…"; or an ACP agent's own options, with its labels.

Everything comes from the call's entry in the thread: its one judgement and its question.
"""

from __future__ import annotations

import html
from urllib.parse import quote

from melgui.core.thread.entries import CallEntry
from melgui.ui.approvals.approval_controls import (
    APPROVE_KEYS,
    DENY_KEYS,
    always_choices,
    keys_text,
    why_not,
)
from melgui.ui.approvals.command_parts import parts_summary_html
from melgui.ui.chat.blocks.call_words import CHANGES
from melgui.ui.chat.blocks.links import ACTION_SCHEME
from melgui.ui.runtime.look.tokens import SPACE_S, SPACE_XS, Colors

GAP = "&nbsp;&nbsp;"


def action_href(verb: str, call_id: str, more: str = "") -> str:
    """act:<verb>/<call id>[:<more>]; `more` (an option's number) has no ":" of its own."""
    tail = f":{more}" if more else ""
    return f"{ACTION_SCHEME}:{verb}/{quote(call_id, safe='')}{tail}"


# Each answer stays on one line when the column is narrow (no "Always / allow ▾").
ALWAYS = "Always\u00a0allow\u00a0▾"


def _button(href: str, words: str, fg: str, bg: str, tip: str = "") -> str:
    title = f' title="{html.escape(tip)}"' if tip else ""
    return (
        f'<a href="{href}"{title} style="text-decoration:none; color:{fg}; '
        f'background-color:{bg}; font-weight:600">{GAP}{html.escape(words)}{GAP}</a>'
    )


def _keys(sequence_text: str, colors: Colors) -> str:
    return f'&nbsp;<span style="color:{colors.muted}; font-size:small">{sequence_text}</span>'


def question_html(entry: CallEntry, colors: Colors, tool_notes: str = "") -> str:
    """What the card of waiting `entry` shows under its change or command."""
    call_id, c = entry.call_id, colors
    question = entry.question
    judgement = entry.judgement
    said: list[str] = []
    if tool_notes:
        said.append(f'<span style="color:{c.muted}">[{html.escape(tool_notes)}]</span>')
    if judgement is not None and judgement.parts and entry.name == "run_command":
        said.append(parts_summary_html(judgement, c, sandbox=judgement.sandboxed))
    elif judgement is not None and judgement.reason:
        said.append(f'<span style="color:{c.muted}">{html.escape(judgement.reason)}</span>')
    preview = question.preview if question is not None else ""
    if preview and entry.name not in CHANGES:  # an agent's own diff of its edit
        lines = preview.splitlines()[:40]
        said.append(
            f'<pre style="font-family:monospace; background-color:{c.code_bg}; margin:0">'
            f"{html.escape(chr(10).join(lines))}</pre>"
        )
    draft = question.draft if question is not None else ""
    if draft:
        said.append(
            f'<span style="color:{c.muted}">Reason for denying:</span> <i>{html.escape(draft)}</i>'
        )
    options = question.options if question is not None else ()
    if options:
        row = "&nbsp;".join(
            _button(
                action_href("choose", call_id, str(index)),
                o.label,
                c.on_accent if o.kind.startswith("allow") else c.text,
                c.accent if o.kind.startswith("allow") else c.muted_bg,
                f"The agent's option ({o.kind.replace('_', ' ')})",
            )
            for index, o in enumerate(options)
        )
    else:
        row = (
            _button(action_href("approve", call_id), "Allow", c.on_accent, c.accent)
            + _keys(keys_text(APPROVE_KEYS), c)
            + GAP
            + _button(action_href("deny", call_id), "Deny", c.text, c.muted_bg)
            + _keys(keys_text(DENY_KEYS), c)
            + GAP
            + _always(entry, c)
            + GAP
            + f'<a href="{action_href("reason", call_id)}" style="font-size:small">'
            "Deny\u00a0with\u00a0a\u00a0reason…</a>"
        )
    head = "".join(f'<p style="margin:{SPACE_XS}px 0 0 0">{part}</p>' for part in said)
    return head + f'<p style="margin-top:{SPACE_S}px; margin-bottom:0">{row}</p>'


def _always(entry: CallEntry, c: Colors) -> str:
    judgement = entry.judgement
    if judgement is not None and always_choices(entry.name, judgement):
        return _button(action_href("always", entry.call_id), ALWAYS, c.text, c.muted_bg)
    tip = why_not(judgement) if judgement is not None else "The policy that asks keeps no rules."
    return (
        f'<span title="{html.escape(tip)}" style="color:{c.muted}; background-color:{c.muted_bg}">'
        f"{GAP}{html.escape(ALWAYS)}{GAP}</span>"
    )
