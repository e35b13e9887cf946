"""The local project memory, the fallback from the relay's, and remember/recall."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.memory import MemoryNote, MemoryUnavailable, ProjectMemory
from melgui.core.protocol.transport import TransportError
from melgui.tools.context import ToolContext
from melgui.tools.memory.store import FallbackMemory, LocalMemory
from melgui.tools.memory.tools import RECALL_TOOL, REMEMBER_TOOL
from melgui.tools.workspace import Workspace

HERE = Path(__file__).resolve().parent


def _context(memory: ProjectMemory, cwd: str) -> ToolContext:
    return ToolContext(Workspace(HERE), memory=memory, memory_project=cwd)


async def remember(memory: ProjectMemory, cwd: str, arguments: dict[str, object]) -> ToolOutcome:
    return await REMEMBER_TOOL.run(_context(memory, cwd), arguments)


async def recall(memory: ProjectMemory, cwd: str, arguments: dict[str, object]) -> ToolOutcome:
    return await RECALL_TOOL.run(_context(memory, cwd), arguments)


def fixed_clock() -> datetime:
    return datetime(2024, 5, 6, 7, 8, 9, tzinfo=UTC)


async def test_notes_are_kept_per_canonical_root(tmp_path: Path) -> None:
    memory = LocalMemory(tmp_path / "data" / "memory.sqlite3", clock=fixed_clock)
    one = tmp_path / "one"
    one.mkdir()
    other = tmp_path / "other"
    other.mkdir()
    os.symlink(one, tmp_path / "alias")
    await memory.remember(str(one), "first")
    await memory.remember(str(tmp_path / "alias"), "second")
    await memory.remember(str(other), "elsewhere")
    assert await memory.recall(str(one)) == [
        MemoryNote("first", "2024-05-06T07:08:09+00:00"),
        MemoryNote("second", "2024-05-06T07:08:09+00:00"),
    ]
    reopened = LocalMemory(tmp_path / "data" / "memory.sqlite3")
    assert [n.note for n in await reopened.recall(str(other))] == ["elsewhere"]


class UnavailableMemory:
    async def remember(self, cwd: str, note: str) -> None:
        raise MemoryUnavailable("no endpoint")

    async def recall(self, cwd: str) -> list[MemoryNote]:
        raise MemoryUnavailable("no endpoint")


class ListMemory:
    def __init__(self) -> None:
        self.notes: list[tuple[str, str]] = []

    async def remember(self, cwd: str, note: str) -> None:
        self.notes.append((cwd, note))

    async def recall(self, cwd: str) -> list[MemoryNote]:
        return [MemoryNote(note, "t") for where, note in self.notes if where == cwd]


class BrokenMemory:
    async def remember(self, cwd: str, note: str) -> None:
        raise TransportError("relay said 500")

    async def recall(self, cwd: str) -> list[MemoryNote]:
        raise TransportError("relay said 500")


async def test_fallback_uses_local_when_primary_has_none(tmp_path: Path) -> None:
    local = LocalMemory(tmp_path / "m.db")
    memory = FallbackMemory(UnavailableMemory(), local)
    await memory.remember(str(tmp_path), "kept locally")
    assert [n.note for n in await memory.recall(str(tmp_path))] == ["kept locally"]


async def test_fallback_prefers_primary(tmp_path: Path) -> None:
    primary = ListMemory()
    local = LocalMemory(tmp_path / "m.db")
    memory = FallbackMemory(primary, local)
    await memory.remember("/p", "on the relay")
    assert primary.notes == [("/p", "on the relay")]
    assert await local.recall("/p") == []


async def test_remember_and_recall_tools(tmp_path: Path) -> None:
    memory = LocalMemory(tmp_path / "m.db", clock=fixed_clock)
    cwd = str(tmp_path)
    empty = await recall(memory, cwd, {})
    assert empty.content.startswith("The project memory is empty")
    assert (
        await remember(memory, cwd, {"note": " use uv "})
    ).content == "Saved to the project memory."
    await remember(memory, cwd, {"note": "tests need QT_QPA_PLATFORM=offscreen"})
    assert (await recall(memory, cwd, {})).content.splitlines() == [
        "2 notes in the project memory:",
        "1. (2024-05-06T07:08:09+00:00) use uv",
        "2. (2024-05-06T07:08:09+00:00) tests need QT_QPA_PLATFORM=offscreen",
    ]


async def test_tool_errors(tmp_path: Path) -> None:
    memory = LocalMemory(tmp_path / "m.db")
    with pytest.raises(ToolError, match="Missing required argument 'note'"):
        await remember(memory, str(tmp_path), {})
    with pytest.raises(ToolError, match="empty"):
        await remember(memory, str(tmp_path), {"note": "   "})
    with pytest.raises(ToolError, match="keep notes under"):
        await remember(memory, str(tmp_path), {"note": "x" * 30_000})
    with pytest.raises(ToolError, match="recall failed: relay said 500"):
        await recall(BrokenMemory(), "/p", {})
    with pytest.raises(ToolError, match="remember failed: relay said 500"):
        await remember(BrokenMemory(), "/p", {"note": "x"})


async def test_unusable_database_is_an_error_result(tmp_path: Path) -> None:
    (tmp_path / "m.db").write_bytes(b"not a database at all" * 100)
    with pytest.raises(ToolError, match="recall failed"):
        await recall(LocalMemory(tmp_path / "m.db"), str(tmp_path), {})
