"""Play one scripted leg through a real transport and check it ends exactly once."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from melgui.core.protocol.events import (
    Done,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCalls,
    WireEntry,
)
from melgui.core.protocol.transport import LegRequest, Transport
from tests.fakes.scenario import Step
from tests.fakes.scripted_server import ScriptedServer


async def play_leg(
    server: ScriptedServer,
    make_transport: Callable[..., Transport],
    request: LegRequest,
    steps: tuple[Step, ...],
    **options: Any,
) -> tuple[list[StreamEvent], list[WireEntry]]:
    """Serve `steps` (3 bytes at a time unless the test chose otherwise) to one leg of
    `make_transport(server.base_url, **options)`; returns its events (each run of text
    or reasoning joined: how a transport groups deltas depends on what each read
    brought) and its wire log."""
    if server.chunk_size is None:
        server.chunk_size = 3
    server.script(list(steps))
    transport = make_transport(server.base_url, **options)
    wire: list[WireEntry] = []
    try:
        events = [event async for event in transport.stream(request, wire.append)]
    finally:
        await transport.aclose()
    terminal = [e for e in events if isinstance(e, ToolCalls | Done | StreamError)]
    assert terminal == events[-1:], f"a leg ends with exactly one final event: {events}"
    return joined(events), wire


def joined(events: list[StreamEvent]) -> list[StreamEvent]:
    """`events` with each run of text deltas (or of reasoning deltas) as one delta."""
    out: list[StreamEvent] = []
    for event in events:
        last = out[-1] if out else None
        if isinstance(event, TextDelta) and isinstance(last, TextDelta):
            out[-1] = TextDelta(last.text + event.text)
        elif isinstance(event, ReasoningDelta) and isinstance(last, ReasoningDelta):
            out[-1] = ReasoningDelta(last.text + event.text)
        else:
            out.append(event)
    return out
