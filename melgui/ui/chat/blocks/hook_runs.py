"""What ran around a call, on its card and in the inspector: the hooks (a line each; in
the inspector with what each printed), and the notes of the steps after it (a language
server's new errors and warnings)."""

from __future__ import annotations

import html
from collections.abc import Sequence

from melgui.core.protocol.tooling import HookRun
from melgui.ui.runtime.theme import Colors

SHOWN_LINES = 12  # of a hook's output, in the inspector


def hook_lines_html(runs: Sequence[HookRun], colors: Colors) -> str:
    """One line per hook run, for the call's card: which hook, its time, what it did."""
    lines = [
        f'<br><span style="color:{colors.warn if run.failed else colors.muted}; '
        f'font-size:small">⚓ {html.escape(run.headline())}</span>'
        for run in runs
    ]
    return "".join(lines)


def note_lines_html(notes: Sequence[str], colors: Colors) -> str:
    """The lines a step after the call left for its card (a language server's new errors
    and warnings): the first as a heading, the rest in monospace."""
    if not notes:
        return ""
    head, *rest = notes
    lines = [f'<br><span style="color:{colors.warn}; font-size:small">{html.escape(head)}</span>']
    lines += [
        f'<br><span style="color:{colors.warn}; font-family:monospace; font-size:small">'
        f"{html.escape(line)}</span>"
        for line in rest
    ]
    return "".join(lines)


def hook_runs_html(runs: Sequence[HookRun], colors: Colors) -> str:
    """Every hook run with its origin, exit code and output, for the inspector."""
    if not runs:
        return ""
    blocks = [f"<b>Hooks</b> ({len(runs)})"]
    for run in runs:
        color = colors.warn if run.failed else colors.text
        code = "killed" if run.timed_out else f"exit {run.exit_code}"
        where = f"{run.origin}" + (f", matcher {run.matcher!r}" if run.matcher else "")
        blocks.append(
            f'<div style="color:{color}">{html.escape(run.headline())}'
            f'<br><span style="color:{colors.muted}">{html.escape(where)} · {code}</span>'
            f'<br><code style="color:{colors.muted}">{html.escape(run.command)}</code></div>'
        )
        for label, text in (("stdout", run.stdout), ("stderr", run.stderr)):
            if text.strip():
                shown = "\n".join(text.strip().splitlines()[:SHOWN_LINES])
                blocks.append(
                    f'<pre style="color:{colors.muted}; margin:0">{label}: '
                    f"{html.escape(shown)}</pre>"
                )
    return "".join(blocks)
