"""What a call card and the inspector say about a call's checkpoint, with act: links; an
edit's or a write's card adds, per file, Accept (reviewed) and Reject (that file back as
before the call)."""

from __future__ import annotations

import html
from urllib.parse import quote

from melgui.core.protocol.views.compacted import NOTE_MARK
from melgui.core.store.checkpoints.log import CheckpointRecord
from melgui.ui.runtime.theme import Colors

SHOWN_PATHS = 3
REVIEWED_TOOLS = ("edit_file", "write_file")  # a change to one file, accepted or rejected


def _link(verb: str, argument: int | str, label: str) -> str:
    return f'<a href="act:{verb}/{argument}" style="font-size:small">{html.escape(label)}</a>'


def changed_files(record: CheckpointRecord) -> str:
    count = len(record.files)
    if count == 0:
        return "changed no files"
    names = ", ".join(c.path for c in record.files[:SHOWN_PATHS])
    more = f", +{count - SHOWN_PATHS}" if count > SHOWN_PATHS else ""
    return f"changed {count} file{'s' if count != 1 else ''} ({names}{more})"


def checkpoint_note(
    record: CheckpointRecord, undone_by: CheckpointRecord | None, colors: Colors
) -> str:
    """One line: "changed N files (…) · diff · compare with now · Undo this call"."""
    parts = [f'<span style="color:{colors.muted}">{html.escape(changed_files(record))}</span>']
    if record.state == "interrupted":
        parts.append(f'<span style="color:{colors.warn}">interrupted (melgui stopped)</span>')
    if record.files:
        parts.append(_link("diff", record.id, "diff"))
        parts.append(_link("compare", record.id, "compare with now"))
        if undone_by is None:
            parts.append(_link("undo", record.id, "Undo this call"))
        else:
            parts.append(f'<span style="color:{colors.warn}">undone</span>')
            parts.append(_link("undo", undone_by.id, "redo"))
    if record.skipped:
        skipped = ", ".join(record.skipped[:SHOWN_PATHS])
        parts.append(
            f'<span style="color:{colors.warn}">not kept (over the size cap): '
            f"{html.escape(skipped)}</span>"
        )
    return "<br>" + " · ".join(parts)


def file_href(verb: str, record: CheckpointRecord, path: str) -> str:
    """act:accept/<record id>/<path> or act:reject/… (the path keeps its slashes)."""
    return f"act:{verb}/{record.id}/{quote(path, safe='/')}"


def _pill(href: str, words: str, colour: str, tint: str, tip: str) -> str:
    return (
        f'<a href="{href}" title="{html.escape(tip)}" style="text-decoration:none; '
        f'color:{colour}; background-color:{tint}; font-size:small; font-weight:600">'
        f"&nbsp;{html.escape(words)}&nbsp;</a>"
    )


def file_review(
    record: CheckpointRecord,
    undone_by: CheckpointRecord | None,
    accepted: set[str],
    colors: Colors,
) -> str:
    """Under an applied edit's or write's card, a line per file it changed: Accept and
    Reject, or "accepted" (Reject still there); nothing once the call was undone."""
    if record.tool not in REVIEWED_TOOLS or not record.files or undone_by is not None:
        return ""
    rows = []
    for change in record.files:
        path = change.path
        reject = _pill(
            file_href("reject", record, path),
            "Reject",
            colors.error,
            colors.error_bg,
            f"Put {path} back as it was before this call (the model is told; can be undone)",
        )
        if path in accepted:
            state = f'<span style="color:{colors.ok}; font-size:small">✓ accepted</span>'
        else:
            state = _pill(
                file_href("accept", record, path),
                "Accept",
                colors.ok,
                colors.ok_bg,
                f"Keep this change to {path}: reviewed, off the Review changes list",
            )
        rows.append(
            f'<span style="font-family:monospace; font-size:small">{html.escape(path)}</span>'
            f"&nbsp;&nbsp;{state}&nbsp;{reject}"
        )
    return "<br>" + "<br>".join(rows)


def rejected_note(record: CheckpointRecord, path: str) -> str:
    """What the model is told of a file of `record`'s call that the person rejected."""
    return (
        f"{NOTE_MARK}The person rejected your change to {path} ({record.tool} "
        f"{record.summary}): the file is back as it was before that call."
    )
