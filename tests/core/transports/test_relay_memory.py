"""Project memory over the relay's /v1/memory endpoint."""

from __future__ import annotations

import pytest

from melgui.core.protocol.tools.memory import MemoryNote, MemoryUnavailable
from melgui.core.protocol.transport import TransportError
from melgui.core.transports.relay_memory import RelayMemory
from tests.fakes import ScriptedRelay, http_error

KEY = "mem-key-42"
CWD = "/home/me/projekt ü"


async def test_remember_then_recall(scripted_relay: ScriptedRelay) -> None:
    memory = RelayMemory(scripted_relay.base_url, KEY)
    await memory.remember(CWD, "tests run with pytest -q")
    await memory.remember(CWD, "the CI image is Debian")
    await memory.remember("/elsewhere", "unrelated")
    notes = await memory.recall(CWD)
    await memory.aclose()
    assert [note.note for note in notes] == ["tests run with pytest -q", "the CI image is Debian"]
    assert all(note.created_at.endswith("Z") for note in notes)
    post, *_, get = scripted_relay.requests
    assert (post.method, post.path, post.json) == (
        "POST",
        "/v1/memory",
        {"cwd": CWD, "note": "tests run with pytest -q"},
    )
    assert (get.method, get.path, get.query) == ("GET", "/v1/memory", {"cwd": CWD})
    assert get.authorization == f"Bearer {KEY}"


async def test_recall_of_an_empty_project(scripted_relay: ScriptedRelay) -> None:
    memory = RelayMemory(scripted_relay.base_url, KEY)
    assert await memory.recall(CWD) == []
    await memory.aclose()


@pytest.mark.parametrize("status", [404, 405, 501])
async def test_relay_without_memory_is_unavailable(
    scripted_relay: ScriptedRelay, status: int
) -> None:
    scripted_relay.memory_error = http_error(status, {"error": {"message": "no memory here"}})
    memory = RelayMemory(scripted_relay.base_url, KEY)
    with pytest.raises(MemoryUnavailable):
        await memory.remember(CWD, "x")
    with pytest.raises(MemoryUnavailable):
        await memory.recall(CWD)
    await memory.aclose()


async def test_disabled_endpoint_is_a_404(scripted_relay: ScriptedRelay) -> None:
    scripted_relay.memory_enabled = False
    memory = RelayMemory(scripted_relay.base_url, KEY)
    with pytest.raises(MemoryUnavailable, match="404"):
        await memory.recall(CWD)
    await memory.aclose()


async def test_server_errors_are_readable(scripted_relay: ScriptedRelay) -> None:
    scripted_relay.memory_error = http_error(500, {"error": {"message": "database is locked"}})
    memory = RelayMemory(scripted_relay.base_url, KEY)
    with pytest.raises(TransportError) as caught:
        await memory.remember(CWD, "x")
    await memory.aclose()
    assert str(caught.value) == (
        "saving a note to the relay's project memory: "
        "HTTP 500 Internal Server Error: database is locked"
    )
    assert caught.value.status == 500


async def test_malformed_answer(scripted_relay: ScriptedRelay) -> None:
    scripted_relay.memory_error = http_error(200, {"items": []})
    memory = RelayMemory(scripted_relay.base_url, KEY)
    with pytest.raises(TransportError, match="no list of notes"):
        await memory.recall(CWD)
    await memory.aclose()


async def test_lenient_note_shapes(scripted_relay: ScriptedRelay) -> None:
    notes = {"notes": ["bare", {"note": "full", "created_at": "2024-05-01T10:00:00Z"}, {"x": 1}]}
    scripted_relay.memory_error = http_error(200, notes)
    memory = RelayMemory(scripted_relay.base_url, KEY)
    assert await memory.recall(CWD) == [
        MemoryNote("bare", ""),
        MemoryNote("full", "2024-05-01T10:00:00Z"),
    ]
    await memory.aclose()


async def test_unreachable_relay() -> None:
    with ScriptedRelay() as relay:
        url = relay.base_url
    memory = RelayMemory(url, KEY)
    with pytest.raises(TransportError, match="could not connect"):
        await memory.remember(CWD, "x")
    await memory.aclose()
