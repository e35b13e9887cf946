"""What a call card and the inspector say about a call's checkpoint, with act: links."""

from __future__ import annotations

import html

from melgui.core.store.checkpoints.log import CheckpointRecord
from melgui.ui.chat.blocks.message_actions import action_icon
from melgui.ui.runtime.theme import Colors

SHOWN_PATHS = 3


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


def user_link(index: int, colors: Colors) -> str:
    """The rewind icon under a person's message (its tooltip says what it does)."""
    return action_icon("rewind", index, "undo-2", "Rewind to here", colors)
