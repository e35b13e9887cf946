"""A reader fed a copy of the thread (snapshot + numbered changes as JSON, as an agent
host sends them) shows the same as one fed the session's own thread."""

from __future__ import annotations

import asyncio
import io
import json

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.events import Done, ReasoningDelta, TextDelta, ToolCalls, Usage
from melgui.core.thread.changes import Change
from melgui.core.thread.codec import (
    change_from_json,
    change_to_json,
    snapshot_from_json,
    snapshot_to_json,
)
from melgui.core.thread.thread import Thread
from melgui.headless import Printer
from tests.fakes.agent_loops import AskingPolicy, call
from tests.fakes.replay import Leg, ReplayTransport
from tests.fakes.tools import RecordingTools


def copy_of(thread: Thread) -> Thread:
    wire = json.loads(json.dumps(snapshot_to_json(thread.snapshot())))
    copy = Thread.from_snapshot(snapshot_from_json(wire))

    def hear(change: Change) -> None:
        copy.apply(change_from_json(json.loads(json.dumps(change_to_json(change)))))

    thread.subscribe(hear)
    return copy


async def test_melgui_exec_prints_the_same_from_a_copy_of_the_thread() -> None:
    legs: list[Leg] = [
        [
            ReasoningDelta("hm"),
            TextDelta("Reading."),
            ToolCalls((call("c1", "read_file", {"path": "a"}),), Usage(prompt_tokens=2)),
        ],
        [TextDelta("Done"), TextDelta("."), Done(Usage(completion_tokens=1))],
    ]
    session = AgentSession(
        ReplayTransport(legs),
        RecordingTools(),
        AskingPolicy({"read_file": "allow read_file"}),
        model="m",
        role="assistant",
        cwd="/p",
    )
    copy = copy_of(session.thread)
    here, there = io.StringIO(), io.StringIO()
    Printer(here, as_json=True).watch(session.thread)
    Printer(there, as_json=True).watch(copy)
    session.submit("go")
    await asyncio.wait_for(session.wait_idle(), 5)
    kinds = [json.loads(line)["kind"] for line in here.getvalue().splitlines()]
    assert kinds == [
        "reasoning", "text", "usage", "tool_call", "tool_result", "text", "text", "usage", "done",
    ]  # fmt: skip
    assert there.getvalue() == here.getvalue()
    await session.aclose()
