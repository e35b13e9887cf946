"""Text chunks an agent sent in a burst reach the chat as a few changes, not one each, with
the same text in the same order; everything that is not a plain text chunk of the same
session and kind passes alone and in its place.

The first test runs tests/fakes/acp_scripted_agent.py, a real agent process, writing its
burst in one write; the others put messages in AgentMessages as the reader does.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any, cast

import pytest

from melgui.desk.hosted_agents import process
from melgui.desk.hosted_agents.host import AcpHost
from melgui.desk.hosted_agents.process import MERGE_CHARS, AgentMessages
from tests.fakes.acp_host import Events, scripted_agent

LIMIT = 60
CHUNKS = 200


def chunk(text: str, kind: str = "agent_message_chunk", **more: Any) -> dict[str, Any]:
    return {"sessionUpdate": kind, "content": {"type": "text", "text": text}, **more}


def note(update: dict[str, Any], session: str = "s1") -> dict[str, Any]:
    params = {"sessionId": session, "update": update}
    return {"jsonrpc": "2.0", "method": "session/update", "params": params}


async def test_a_burst_of_chunks_is_a_few_changes_with_the_same_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # the reader hands the burst on without a pause (else how much joins depends on time)
    monkeypatch.setattr(process, "FEED_SLICE_S", 3600.0)
    pieces = [f"piece {n} " + ("\n\n" if n % 10 == 9 else "") for n in range(CHUNKS)]
    plan = {
        "sessionUpdate": "plan",
        "entries": [{"content": "a step", "priority": "medium", "status": "pending"}],
    }
    thoughts = [chunk("so ", "agent_thought_chunk"), chunk("then", "agent_thought_chunk")]
    steps = [
        {"burst": [chunk(piece) for piece in pieces]},
        {"burst": [*thoughts, plan, chunk("after "), chunk("the plan")]},
    ]
    events = Events()
    host = AcpHost(scripted_agent(), str(tmp_path))
    host.subscribe(events)
    try:
        await asyncio.wait_for(host.start(), LIMIT)
        stop = await asyncio.wait_for(host.prompt(json.dumps(steps)), LIMIT)
    finally:
        await host.aclose()
    assert stop == "end_turn"
    expected = "".join(pieces) + "after the plan"
    assert events.text() == expected
    # one each, were the pipe not read at once
    assert len(events.of("assistant_text")) < CHUNKS // 10
    assert [e.text for e in events.of("assistant_reasoning")] == ["so then"]
    assert host.state.plan == [("a step", "pending")]
    [answer] = [m for m in host.conversation.messages if m.role == "assistant"]
    assert (answer.content, answer.reasoning) == (expected, "so then")


async def test_only_plain_text_chunks_of_one_session_kind_and_message_join() -> None:
    messages = AgentMessages(cast(asyncio.StreamWriter, None))  # nothing is sent here
    tool_call = {"sessionUpdate": "tool_call", "toolCallId": "t1", "title": "a call"}
    marked = {"type": "text", "text": "marked", "annotations": {"priority": 1}}
    request = {"jsonrpc": "2.0", "id": 3, "method": "fs/read_text_file", "params": {}}
    for message in (
        note(chunk("a")),
        note(chunk("b")),
        note(chunk("other", "agent_thought_chunk")),
        note(chunk("c")),
        note({"sessionUpdate": "agent_message_chunk", "content": marked}),
        note(chunk("d")),
        note(chunk("e"), session="s2"),
        note(chunk("f", messageId="m1")),
        note(chunk("g", messageId="m1")),
        note(chunk("h", messageId="m2")),
        note(tool_call),
        note(chunk("i")),
        request,
        note(chunk("j")),
        note(chunk("k"), session="s2"),
    ):
        messages.put(message)
    messages.end()
    taken = []
    while (message := await messages.receive()) is not None:
        taken.append(message)
    seen = [
        (m["params"]["sessionId"], m["params"]["update"]["content"]["text"])
        if "content" in m.get("params", {}).get("update", {})
        else m.get("method")
        for m in taken
    ]
    assert seen == [
        ("s1", "ab"),
        ("s1", "other"),
        ("s1", "c"),
        ("s1", "marked"),
        ("s1", "d"),
        ("s2", "e"),
        ("s1", "fg"),
        ("s1", "h"),
        "session/update",
        ("s1", "i"),
        "fs/read_text_file",
        ("s1", "j"),
        ("s2", "k"),
    ]
    assert taken[3]["params"]["update"]["content"]["annotations"] == {"priority": 1}
    assert taken[6]["params"]["update"]["messageId"] == "m1"


async def test_a_joined_chunk_stops_growing_past_its_size() -> None:
    messages = AgentMessages(cast(asyncio.StreamWriter, None))
    piece = "x" * (MERGE_CHARS // 2 + 1)
    for n in range(3):
        messages.put(note(chunk(piece.replace("x", str(n)))))
    messages.end()
    first, second = await messages.receive(), await messages.receive()
    assert first is not None and second is not None
    texts = [m["params"]["update"]["content"]["text"] for m in (first, second)]
    assert texts == [piece.replace("x", "0") + piece.replace("x", "1"), piece.replace("x", "2")]
    assert await messages.receive() is None
