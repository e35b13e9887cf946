"""What a call would do, as HTML: a coloured diff, a command and its folder, or pretty JSON."""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

from melgui.core.protocol.catalog import ALL_TOOLS
from melgui.ui.runtime.theme import Colors

# (tool name, arguments) -> unified diff text; raises on refusal. Runs in a worker thread.
DiffProvider = Callable[[str, dict[str, Any]], str]

MAX_JSON_CHARS = 200_000
MAX_DIFF_LINES = 5_000  # a diff longer than this shows its start and a count
_ENCODER = json.JSONEncoder(indent=2, ensure_ascii=False)


def pretty_arguments(raw: str, arguments: dict[str, Any] | None) -> str:
    """The arguments as indented JSON, at most MAX_JSON_CHARS of it (then a note).

    The size is capped before dumping: long strings and containers are cut first and
    the encoder stops once it has enough, so a 50 MB argument costs what 200 kB does.
    """
    if arguments is None:
        return raw if len(raw) <= MAX_JSON_CHARS else raw[:MAX_JSON_CHARS] + _cut_note(raw)
    pieces: list[str] = []
    size = 0
    for piece in _ENCODER.iterencode(_capped(arguments, MAX_JSON_CHARS)):
        pieces.append(piece)
        size += len(piece)
        if size > MAX_JSON_CHARS:
            break
    text = "".join(pieces)
    if size > MAX_JSON_CHARS:
        return text[:MAX_JSON_CHARS] + _cut_note(raw)
    return text


def _cut_note(raw: str) -> str:
    return f"\n… (cut at {MAX_JSON_CHARS:,} characters; {len(raw):,} characters as sent)"


def _capped(value: Any, limit: int) -> Any:
    """`value` with every string cut to `limit` characters and every list or object to
    `limit` items: what dumping it shows within `limit` characters is unchanged."""
    if isinstance(value, str):
        return value[:limit]
    if isinstance(value, dict):
        return {key: _capped(item, limit) for key, item in list(value.items())[:limit]}
    if isinstance(value, list | tuple):
        return [_capped(item, limit) for item in value[:limit]]
    return value


def _pre(body: str, colors: Colors) -> str:
    return (
        f'<pre style="font-family:monospace; background-color:{colors.code_bg}; '
        f'margin:0">{body}</pre>'
    )


def diff_html(diff: str, colors: Colors) -> str:
    lines = []
    shown = diff.splitlines()
    more = len(shown) - MAX_DIFF_LINES
    for line in shown[:MAX_DIFF_LINES]:
        escaped = html.escape(line) or " "
        if line.startswith(("+++", "---")):
            lines.append(f"<b>{escaped}</b>")
        elif line.startswith("+"):
            lines.append(f'<span style="color:{colors.ok}">{escaped}</span>')
        elif line.startswith("-"):
            lines.append(f'<span style="color:{colors.error}">{escaped}</span>')
        elif line.startswith("@@"):
            lines.append(f'<span style="color:{colors.accent}">{escaped}</span>')
        else:
            lines.append(escaped)
    if more > 0:
        lines.append(f'<span style="color:{colors.muted}">… {more:,} more lines</span>')
    return _pre("\n".join(lines), colors)


def arguments_html(
    name: str,
    raw: str,
    arguments: dict[str, Any] | None,
    colors: Colors,
    *,
    cwd: str,
    preview: str | None,
    command_parts: str = "",
) -> str:
    """The body of the inspector's "Arguments" pane for one call. `command_parts` is a
    waiting command as the rules read it (command_parts.parts_html)."""
    parts: list[str] = []
    if arguments is None:
        parts.append(
            f'<p style="color:{colors.error}">The arguments are not a JSON object; '
            "the model gets an error back.</p>"
        )
    if name == "run_command" and arguments is not None:
        command = arguments.get("command")
        parts.append(
            f"<p><b>Command</b></p>{_pre(html.escape(str(command)), colors)}"
            f"<p><b>Folder</b> <code>{html.escape(cwd)}</code></p>"
        )
        if command_parts:
            parts.append(f"<p><b>What the rules matched</b></p>{command_parts}")
    elif (has_diff(name) or preview) and arguments is not None:
        if not preview:
            parts.append(f'<p style="color:{colors.muted}">Computing the diff…</p>')
        else:
            parts.append(f"<p><b>Changes</b></p>{diff_html(preview, colors)}")
    parts.append(
        f"<p><b>Arguments</b></p>{_pre(html.escape(pretty_arguments(raw, arguments)), colors)}"
    )
    return "".join(parts)


def has_diff(name: str) -> bool:
    """The call's change can be previewed before it is approved."""
    tool = ALL_TOOLS.get(name)
    return tool is not None and tool.diff_preview
