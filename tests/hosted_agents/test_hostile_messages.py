"""A hosted ACP agent that sends JSON nested past melgui's cap: the turn fails with a
plain reason, at once, instead of the reader dying on a RecursionError.

Against tests/fakes/acp_scripted_agent.py, a real agent process on the official SDK.
"""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from melgui.desk.hosted_agents.host import AcpHost
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 30  # seconds: the failure comes long before this; a hang fails the test


async def _play(folder: str, *steps: dict[str, Any]) -> tuple[str, Events]:
    events = Events()
    host = AcpHost(scripted_agent(), folder)
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        stop = await asyncio.wait_for(host.prompt(json.dumps(list(steps))), LIMIT)
    finally:
        await host.aclose()
    return stop, events


@pytest.mark.parametrize("levels", [100_000, 300])
async def test_an_update_nested_past_the_cap_fails_the_turn_with_a_reason(
    tmp_path: Any, levels: int
) -> None:
    deep = "[" * levels + "]" * levels
    update = {"sessionId": "s", "update": {"sessionUpdate": "agent_message_chunk"}}
    line = json.dumps({"jsonrpc": "2.0", "method": "session/update", "params": update})
    line = line[:-2] + ', "_meta": ' + deep + "}}"
    stop, events = await _play(str(tmp_path), {"say": "before"}, {"garbage": line}, {"hang": 1})
    assert stop == "failed"
    [failed] = events.of("turn_failed")
    assert "nested deeper than 256 levels" in failed.message
    assert "before" in events.text()
