"""Which project memory the desk's tools use: the relay's, with the local store only when
the relay has none (never when the relay fails for another reason)."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.config.settings import Settings
from melgui.core.protocol.transport import TransportError
from melgui.core.transports.relay_memory import RelayMemory
from melgui.desk.kit import project_memory
from melgui.tools.memory.store import FallbackMemory, LocalMemory
from tests.fakes import ScriptedRelay, http_error


async def close(memory: object) -> None:
    assert isinstance(memory, FallbackMemory) and isinstance(memory.primary, RelayMemory)
    await memory.primary.aclose()


def relay_settings(relay: ScriptedRelay) -> Settings:
    return Settings(connection="relay", relay_url=relay.url)


async def test_a_relay_connection_keeps_notes_on_the_relay(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    memory = project_memory(relay_settings(scripted_relay), "k")
    assert isinstance(memory, FallbackMemory)
    await memory.remember(str(tmp_path), "use uv, not pip")
    assert [n["note"] for n in scripted_relay.memory_notes[str(tmp_path)]] == ["use uv, not pip"]
    assert await memory.local.recall(str(tmp_path)) == []
    assert [n.note for n in await memory.recall(str(tmp_path))] == ["use uv, not pip"]
    await close(memory)


async def test_a_relay_without_memory_falls_back_to_the_local_store(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.memory_enabled = False
    memory = project_memory(relay_settings(scripted_relay), "k")
    await memory.remember(str(tmp_path), "kept locally")
    assert [n.note for n in await memory.recall(str(tmp_path))] == ["kept locally"]
    assert scripted_relay.memory_notes == {}
    await close(memory)


async def test_a_failing_relay_is_an_error_not_a_silent_local_note(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.memory_error = http_error(500, {"error": {"message": "database down"}})
    memory = project_memory(relay_settings(scripted_relay), "k")
    assert isinstance(memory, FallbackMemory)
    with pytest.raises(TransportError, match="database down"):
        await memory.remember(str(tmp_path), "must not land locally")
    assert await memory.local.recall(str(tmp_path)) == []
    await close(memory)


async def test_a_failing_relay_never_answers_recall_from_the_local_store(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    memory = project_memory(relay_settings(scripted_relay), "k")
    assert isinstance(memory, FallbackMemory)
    await memory.local.remember(str(tmp_path), "an old local note")
    scripted_relay.memory_error = http_error(500, {"error": {"message": "database down"}})
    with pytest.raises(TransportError, match="database down"):
        await memory.recall(str(tmp_path))
    await close(memory)


def test_other_connections_use_the_local_store() -> None:
    assert isinstance(project_memory(Settings(connection="local"), None), LocalMemory)
    assert isinstance(project_memory(Settings(connection="openai"), "k"), LocalMemory)
