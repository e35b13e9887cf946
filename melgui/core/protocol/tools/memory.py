"""remember and recall: docs/tools.md's definitions, verbatim, and the project memory they
use (docs/wire-protocol.md §2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from melgui.core.protocol.tools.definition import ToolDef

REMEMBER = ToolDef(
    "remember",
    "Save a note to the shared project memory.",
    {"type": "object", "required": ["note"], "properties": {"note": {"type": "string"}}},
    roles=("worker", "orchestrator"),
    summary_argument="note",
)

RECALL = ToolDef(
    "recall",
    "Read the notes saved in the shared project memory.",
    {"type": "object", "properties": {}},
    roles=("worker", "orchestrator"),
    read_only=True,
)


@dataclass(frozen=True, slots=True)
class MemoryNote:
    note: str
    created_at: str  # ISO 8601, as the store or the relay gives it


class MemoryUnavailable(Exception):
    """The store cannot serve this project (e.g. the relay has no memory endpoint)."""


class ProjectMemory(Protocol):
    """Notes shared by the agents of one project; the project comes from `cwd`."""

    async def remember(self, cwd: str, note: str) -> None: ...

    async def recall(self, cwd: str) -> list[MemoryNote]: ...
