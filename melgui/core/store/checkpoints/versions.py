"""The text of a conflicting file's three versions, for the dialog that asks which to keep:

    text = await version_text(checkpoints, "a.py", "now", plan.now.blob)
    versions = await conflict_versions(checkpoints, plan.conflicts)   # sent over the wire

"before" and "agent" are in the shadow repository; "now" is the file on disk (the
person's version is not in a snapshot yet).
"""

from __future__ import annotations

import os
from collections.abc import Sequence

from melgui.core.store.checkpoints.checkpointer import Checkpointer
from melgui.core.store.checkpoints.restore import CHOICES, Choice, PathPlan

# A version sent to a window elsewhere is cut here, so one huge file cannot flood the link.
SENT_LIMIT = 512 * 1024


async def version_text(
    checkpoints: Checkpointer, path: str, choice: Choice, blob: str | None
) -> str:
    """One version as text to show; what has no text to show says what it is instead."""
    if blob is None:
        return "(no file)"
    if choice == "now":
        full = os.path.join(checkpoints.folder, path)
        try:
            if os.path.islink(full):
                return f"(symbolic link to {os.readlink(full)})"
            with open(full, "rb") as handle:
                data = handle.read()
        except OSError as exc:
            return f"(cannot read: {exc.strerror})"
    else:
        data = await checkpoints.repo.run("cat-file", "blob", blob)
    if b"\0" in data[:8000]:
        return f"(binary, {len(data)} bytes)"
    return data.decode("utf-8", "replace")


async def conflict_versions(
    checkpoints: Checkpointer, conflicts: Sequence[PathPlan], limit: int = SENT_LIMIT
) -> dict[str, dict[str, str | None]]:
    """Per conflicting path, each version's text (None: no file in that version), each cut
    at `limit` characters with a line that says so."""
    versions: dict[str, dict[str, str | None]] = {}
    for plan in conflicts:
        texts: dict[str, str | None] = {}
        for choice in CHOICES:
            state = plan.target(choice)
            if state is None:
                texts[choice] = None
                continue
            text = await version_text(checkpoints, plan.path, choice, state.blob)
            if len(text) > limit:
                text = text[:limit] + f"\n… (cut: {len(text):,} characters in all)"
            texts[choice] = text
        versions[plan.path] = texts
    return versions
