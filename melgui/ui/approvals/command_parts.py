"""A command line as the rules read it, in HTML: each part underlined in the colour of
its verdict, then one line per part saying which rule matched it or why it is asked.

Used by a waiting call's card and the inspector's argument view for run_command.
"""

from __future__ import annotations

import html

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.judgement import JudgedPart, Judgement, Verdict
from melgui.core.protocol.views.scopes import SCOPE_LABEL
from melgui.ui.runtime.look.tokens import SPACE_XS
from melgui.ui.runtime.theme import Colors

ICON: dict[Verdict, str] = {"allow": "✓", "ask": "◆", "deny": "⊘"}
WORD: dict[Verdict, str] = {"allow": "matched", "ask": "asked", "deny": "denied"}


def command_judgement(request: ApprovalRequest | None) -> Judgement | None:
    """The kept judgement of a pending run_command, when the policy read it part by part."""
    if request is None or request.call.name != "run_command":
        return None
    judgement = request.judgement
    return judgement if judgement.parts else None


def _color(verdict: Verdict, colors: Colors) -> str:
    return {"allow": colors.ok, "ask": colors.pending, "deny": colors.error}[verdict]


def marked_command(judgement: Judgement, colors: Colors) -> str:
    """The command with every innermost part underlined in its verdict's colour."""
    text = judgement.command
    # innermost parts win: a substitution inside an allowed echo shows its own colour
    owner: list[JudgedPart | None] = [None] * len(text)
    for each in sorted(judgement.parts, key=lambda p: p.end - p.start, reverse=True):
        for i in range(each.start, min(each.end, len(text))):
            owner[i] = each
    out: list[str] = []
    i = 0
    while i < len(text):
        part = owner[i]
        j = i
        while j < len(text) and owner[j] is part:
            j += 1
        chunk = html.escape(text[i:j])
        if part is None or (part.start == 0 and part.end == len(text) and part.rule is None):
            out.append(chunk)
        else:
            color = _color(part.verdict, colors)
            out.append(f'<span style="color:{color}; text-decoration:underline">{chunk}</span>')
        i = j
    return "".join(out)


def part_lines(judgement: Judgement, colors: Colors) -> str:
    rows: list[str] = []
    for part in judgement.parts:
        color = _color(part.verdict, colors)
        label = html.escape(_short(part.text))
        why = html.escape(part.reason)
        if part.rule is not None:
            why += f" ({html.escape(SCOPE_LABEL[part.rule.scope])})"
        rows.append(
            f'<span style="color:{color}">{ICON[part.verdict]} {WORD[part.verdict]}</span> '
            f'<code>{label}</code> <span style="color:{colors.muted}">— {why}</span>'
        )
    return "<br>".join(rows)


def parts_html(judgement: Judgement, colors: Colors, *, sandbox: bool) -> str:
    """The marked command, a line per part, and what happens if it is approved."""
    body = (
        f'<p style="font-family:monospace; white-space:pre-wrap; margin:0">'
        f"{marked_command(judgement, colors)}</p>"
        f'<p style="margin-top:{SPACE_XS}px">{part_lines(judgement, colors)}</p>'
    )
    if sandbox:
        body += (
            f'<p style="color:{colors.ok}; margin-top:{SPACE_XS}px">▣ sandboxed: it runs with only '
            "the project writable, without melgui's keys</p>"
        )
    return body


def _short(text: str, limit: int = 60) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def parts_summary_html(judgement: Judgement, colors: Colors, *, sandbox: bool) -> str:
    """The card's short form: the marked command, then only what is asked."""
    matched = sum(1 for p in judgement.parts if p.verdict == "allow")
    asked = [
        f"<code>{html.escape(_short(p.text, 40))}</code> ({html.escape(p.reason)})"
        for p in judgement.parts
        if p.verdict != "allow"
    ]
    said = [f'<span style="color:{colors.ok}">✓ {matched} matched</span>'] if matched else []
    if asked:
        said.append(f'<span style="color:{colors.pending}">◆ asked:</span> ' + "; ".join(asked))
    line = " · ".join(said)
    if sandbox:
        line += f' · <span style="color:{colors.ok}">▣ sandboxed</span>'
    return (
        f'<span style="font-family:monospace">{marked_command(judgement, colors)}</span><br>{line}'
    )
