"""make_transport: the configured transport, or one that says what to fix."""

from __future__ import annotations

import asyncio

import pytest

from melgui.core.config.connection_settings import api_key_kind, connection_label, needs_api_key
from melgui.core.config.settings import Settings
from melgui.core.protocol.catalog import tools_for_role
from melgui.core.protocol.events import StreamError
from melgui.core.protocol.transport import LegRequest, TransportError
from melgui.core.transports.connection import UnconfiguredTransport, make_transport
from melgui.core.transports.local.llama import LocalTransport
from melgui.core.transports.openai_compat import OpenAITransport
from melgui.core.transports.relay import RelayTransport


def _close(transport: object) -> None:
    asyncio.run(transport.aclose())  # type: ignore[attr-defined]


def test_nothing_configured_means_local() -> None:
    transport = make_transport(Settings(), None)
    assert isinstance(transport, LocalTransport)
    assert api_key_kind(Settings()) == "local"
    assert not needs_api_key(Settings())


def test_relay_and_openai_settings_pick_their_transport() -> None:
    relay = make_transport(
        Settings(connection="relay", relay_url="http://127.0.0.1:9", relay_stream_path="/s"), "k"
    )
    assert isinstance(relay, RelayTransport) and relay.stream_path == "/s"
    _close(relay)
    openai = make_transport(
        Settings(connection="openai", openai_base_url="http://127.0.0.1:11434/v1"), None
    )
    assert isinstance(openai, OpenAITransport)
    _close(openai)


def test_key_kinds_follow_the_presets() -> None:
    assert api_key_kind(Settings(connection="relay")) == "relay"
    assert api_key_kind(Settings(connection="openai")) == "meliai"
    ollama = Settings(connection="openai", openai_base_url="http://127.0.0.1:11434/v1")
    assert api_key_kind(ollama) == "ollama" and not needs_api_key(ollama)
    custom = Settings(connection="openai", openai_base_url="http://example.test/v1")
    assert api_key_kind(custom) == "custom" and needs_api_key(custom)
    assert connection_label(ollama) == "Ollama (local)"


@pytest.mark.parametrize(
    ("settings", "words"),
    [
        (Settings(connection="relay"), "No relay URL"),
        (Settings(connection="relay", relay_url="ftp://x"), "not an http"),
        (Settings(connection="openai", openai_base_url="localhost:1234"), "not an http"),
    ],
)
def test_unusable_urls_fail_each_leg_with_what_to_fix(settings: Settings, words: str) -> None:
    transport = make_transport(settings, None)
    assert isinstance(transport, UnconfiguredTransport)

    async def first_event() -> object:
        request = LegRequest("m", [], tools_for_role("assistant"), "assistant", "/")
        async for event in transport.stream(request):
            return event
        return None

    event = asyncio.run(first_event())
    assert isinstance(event, StreamError) and words in event.message
    with pytest.raises(TransportError, match=words):
        asyncio.run(transport.list_models())
