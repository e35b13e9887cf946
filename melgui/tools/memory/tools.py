"""remember and recall: the model's side of the project memory; the project is the cwd."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.definition import Tool
from melgui.core.protocol.tools.memory import RECALL, REMEMBER, MemoryUnavailable, ProjectMemory
from melgui.core.protocol.transport import TransportError
from melgui.tools.context import ToolContext

MAX_NOTE_CHARS = 20_000
MAX_RECALL_CHARS = 60_000
_FAILURES = (MemoryUnavailable, TransportError, sqlite3.Error, OSError)


def _memory(context: ToolContext) -> ProjectMemory:
    if context.memory is None:
        raise ToolError("The project memory is not available here.")
    return context.memory


@dataclass(frozen=True, slots=True)
class RememberInput:
    note: str

    def __post_init__(self) -> None:
        note = self.note.strip()
        if not note:
            raise ToolError("Argument 'note' is empty; give the note to remember.")
        if len(note) > MAX_NOTE_CHARS:
            raise ToolError(
                f"The note has {len(note):,} characters; keep notes under {MAX_NOTE_CHARS:,}."
            )


async def remember(context: ToolContext, given: RememberInput) -> ToolOutcome:
    memory = _memory(context)
    try:
        await memory.remember(context.memory_cwd, given.note.strip())
    except _FAILURES as exc:
        raise ToolError(f"remember failed: {exc}") from None
    return ToolOutcome("Saved to the project memory.")


REMEMBER_TOOL = Tool(REMEMBER, RememberInput, remember)


@dataclass(frozen=True, slots=True)
class RecallInput:
    pass


async def recall(context: ToolContext, given: RecallInput) -> ToolOutcome:
    memory = _memory(context)
    try:
        notes = await memory.recall(context.memory_cwd)
    except _FAILURES as exc:
        raise ToolError(f"recall failed: {exc}") from None
    if not notes:
        return ToolOutcome("The project memory is empty: no notes saved for this project yet.")
    lines: list[str] = []
    used = 0
    # The newest notes matter most; older ones are dropped first when there are too many.
    for number in range(len(notes), 0, -1):
        item = notes[number - 1]
        stamp = f" ({item.created_at})" if item.created_at else ""
        entry = f"{number}.{stamp} {item.note}"
        if lines and used + len(entry) > MAX_RECALL_CHARS:
            lines.append(f"[{number} older notes not shown.]")
            break
        used += len(entry)
        lines.append(entry)
    header = f"{len(notes)} note{'s' if len(notes) != 1 else ''} in the project memory:"
    return ToolOutcome("\n".join([header, *reversed(lines)]))


RECALL_TOOL = Tool(RECALL, RecallInput, recall)
