"""A plain JSON reply nested past the decoder's cap (the relay's project memory, the
model list, discovery probes) is a readable TransportError, not a RecursionError that
no caller catches."""

from __future__ import annotations

import pytest

from melgui.core.protocol.transport import TransportError
from melgui.core.transports.relay_memory import RelayMemory
from tests.fakes import ScriptedRelay, http_error

DEEP = '{"notes": ' + "[" * 100_000 + "]" * 100_000 + "}"


async def test_a_reply_nested_past_the_cap_is_a_transport_error(
    scripted_relay: ScriptedRelay,
) -> None:
    scripted_relay.memory_error = http_error(200, DEEP)
    memory = RelayMemory(scripted_relay.base_url, "k")
    try:
        with pytest.raises(TransportError, match="nested deeper than 256 levels"):
            await memory.recall("/project")
    finally:
        await memory.aclose()
