"""What a call's card shows when it is unfolded: the change it makes (tinted diff lines),
a command and its output (a dark monospace block with the exit code), another tool's
result, and while it waits, its question (approval_card)."""

from __future__ import annotations

import html
from typing import Any

from melgui.core.protocol.call_life import CallPhase
from melgui.ui.chat.blocks.call_words import CHANGES, change_lines, output_lines
from melgui.ui.runtime.look.tokens import SPACE_S, SPACE_XS, Colors

SHOWN_LINES = 40  # of a change or an output; the side panel has all of it


def _block(lines: list[str], colour: str, background: str) -> str:
    text = html.escape("\n".join(lines)) or "&nbsp;"
    return (
        f'<pre style="background-color:{background}; color:{colour}; font-family:monospace; '
        f'white-space:pre-wrap; margin-top:{SPACE_S}px; margin-bottom:0">{text}</pre>'
    )


def diff_html(lines: list[str], colors: Colors) -> str:
    """A change's lines, added and removed ones on their tints (a block per line)."""
    rows = []
    for line in lines:
        background = (
            colors.diff_add
            if line.startswith("+")
            else colors.diff_del
            if line.startswith("-")
            else colors.code_bg
        )
        rows.append(
            f'<p style="background-color:{background}; color:{colors.text}; margin:0; '
            f'font-family:monospace; white-space:pre">{html.escape(line) or "&nbsp;"}</p>'
        )
    return f'<p style="margin:{SPACE_XS}px 0 0 0"></p>' + "".join(rows)


def body_html(
    call_id: str,
    name: str,
    arguments: dict[str, Any] | None,
    status: CallPhase,
    result: str | None,
    colors: Colors,
    shown: int = SHOWN_LINES,
    question: str = "",
) -> str:
    """The unfolded part of a card (empty when there is nothing more to show); `shown`
    lines at most of a change or an output (fewer while it opens); `question`: a
    waiting call's question (approval_card), drawn under the change or command."""
    parts = []
    if name in CHANGES:
        lines = change_lines(name, arguments, shown)
        if lines:
            parts.append(diff_html(lines, colors))
    elif name == "run_command" and arguments is not None:
        command = [f"$ {arguments.get('command', '')}"]
        if result is not None:
            command += output_lines(result, shown)
        parts.append(_block(command, colors.output_text, colors.output_bg))
    elif result is not None:
        parts.append(_block(output_lines(result, shown), colors.text, colors.code_bg))
    if status == "waiting":
        parts.append(question)
    return "".join(parts)
