"""A hosted agent that streams text without end: melgui keeps at most its cap of a turn's
text and reasoning, says once that it stopped showing more, and the turn ends as the
agent ends it, with a valid conversation.

Against tests/fakes/acp_scripted_agent.py, a real agent process on the official SDK.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from melgui.desk.hosted_agents import updates
from melgui.desk.hosted_agents.host import AcpHost
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 60
CAP = 256 * 1024  # the real cap is 16 MiB; scaled down so the flood is quick
PIECE = "flood " * 1000  # 6,000 characters a chunk


async def test_a_text_flood_is_kept_to_the_cap(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(updates, "MAX_TURN_TEXT", CAP)
    events = Events()
    host = AcpHost(scripted_agent(), str(tmp_path))
    host.subscribe(events)
    steps = [{"say": PIECE, "times": 200}, {"think": PIECE * 100}, {"say": "tail"}]
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        stop = await asyncio.wait_for(host.prompt(json.dumps(steps)), LIMIT)
    finally:
        await host.aclose()
    assert stop == "end_turn"
    shown = events.text()
    assert len(shown) < CAP + len(PIECE) + 1000
    assert shown.count("melgui stopped showing") == 1
    reasoning = "".join(e.text for e in events.of("assistant_reasoning"))
    assert len(reasoning) + len(shown) < CAP + len(PIECE) + 1000
    [answer] = [m for m in host.conversation.messages if m.role == "assistant"]
    assert len(answer.content) + len(answer.reasoning) < CAP + len(PIECE) + 1000
