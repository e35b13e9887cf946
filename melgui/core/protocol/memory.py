"""Project memory contract for `remember`/`recall` (docs/wire-protocol.md §2)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol


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
