"""The scripted servers themselves: rules, function legs, holds, problems, sync use."""

from __future__ import annotations

import json
import threading
from typing import Any

import httpx
import pytest

from melgui.core.protocol.catalog import tools_for_role
from melgui.core.protocol.events import Done, StreamError, StreamEvent, TextDelta
from melgui.core.protocol.transport import LegRequest
from melgui.core.transports.relay import RelayTransport
from tests.fakes import (
    RecordedRequest,
    ScriptedOpenAI,
    ScriptedRelay,
    Step,
    done,
    hold,
    text,
    tool_call,
    tool_calls,
)


def leg(role: str = "worker", prompt: str = "task one") -> LegRequest:
    return (
        LegRequest(
            "m", [{"role": "user", "content": prompt}], tools_for_role("worker"), "worker", "/p"
        )
        if role == "worker"
        else LegRequest("m", [{"role": "user", "content": prompt}], (), "orchestrator", "/p")
    )


async def collect(relay: ScriptedRelay, request: LegRequest) -> list[StreamEvent]:
    transport = RelayTransport(relay.base_url, None)
    events = [event async for event in transport.stream(request)]
    await transport.aclose()
    return events


async def test_rules_answer_matching_requests_before_the_script(
    scripted_relay: ScriptedRelay,
) -> None:
    def worker(request: RecordedRequest) -> list[Step]:
        return [text(f"did {request.last_user_text}"), done()]

    scripted_relay.on(lambda r: r.tool_role == "worker", worker)
    scripted_relay.on(lambda r: "once" in r.last_user_text, [text("only once"), done()], times=1)
    scripted_relay.script([text("lead"), done()])
    assert await collect(scripted_relay, leg("worker", "x")) == [
        TextDelta("did x"),
        Done(None, "stop"),
    ]
    assert await collect(scripted_relay, leg("lead", "once")) == [
        TextDelta("only once"),
        Done(None, "stop"),
    ]
    assert await collect(scripted_relay, leg("lead", "once")) == [
        TextDelta("lead"),
        Done(None, "stop"),
    ]
    assert scripted_relay.unplayed == 0
    assert [r.tool_role for r in scripted_relay.legs_received] == [
        "worker",
        "orchestrator",
        "orchestrator",
    ]
    assert "remember" in scripted_relay.legs_received[0].tool_names


async def test_a_request_without_a_leg_is_a_problem() -> None:
    with ScriptedRelay() as relay:
        events = await collect(relay, leg())
        assert isinstance(events[0], StreamError) and events[0].status == 500
        assert "no leg left for request #1" in events[0].message
        with pytest.raises(AssertionError, match="no leg left"):
            relay.check()


async def test_hold_lets_a_test_act_mid_stream(scripted_relay: ScriptedRelay) -> None:
    gate = threading.Event()
    scripted_relay.script([text("first"), hold(gate), text("second"), done()])
    transport = RelayTransport(scripted_relay.base_url, None)
    seen = []
    async for event in transport.stream(leg()):
        seen.append(event)
        if event == TextDelta("first"):
            assert len(scripted_relay.legs_received) == 1
            gate.set()
    await transport.aclose()
    assert seen == [TextDelta("first"), TextDelta("second"), Done(None, "stop")]


def test_usable_from_sync_code_and_other_threads() -> None:
    with pytest.raises(TypeError, match="a leg is a list of steps"):
        ScriptedRelay(text("hi"), done())  # type: ignore[arg-type]
    with ScriptedRelay([text("hi"), done()]) as relay:
        with httpx.Client() as client:
            models = client.get(relay.base_url + "/v1/models").json()
            assert [m["id"] for m in models["data"]] == ["mel-default", "mel-chat"]
            body = {"messages": [], "tool_role": "assistant"}
            thread = threading.Thread(
                target=lambda: client.post(relay.base_url + "/v1/agent/stream", json=body)
            )
            thread.start()
            (request,) = relay.wait_for_legs(1)
            thread.join()
        assert request.json == body and relay.unplayed == 0


def test_close_ends_a_paused_leg_promptly() -> None:
    gate = threading.Event()
    relay = ScriptedRelay([text("a"), hold(gate, timeout=60)]).start()
    answered = threading.Event()
    received: list[bytes] = []

    def read() -> None:
        with (
            httpx.Client() as client,
            client.stream("POST", relay.base_url + "/v1/agent/stream", json={}) as response,
        ):
            answered.set()
            try:
                for chunk in response.iter_bytes():
                    received.append(chunk)
            except httpx.HTTPError:
                pass

    thread = threading.Thread(target=read)
    thread.start()
    assert answered.wait(10)
    relay.close()
    thread.join(10)
    assert not thread.is_alive()
    assert b"".join(received).startswith(b"event: delta")


def responses_events(server: ScriptedOpenAI) -> list[dict[str, Any]]:
    """POST /v1/responses (stream) and the events' data, each checked against its name."""
    body = {"model": "gpt-test", "input": "hi", "stream": True}
    reply = httpx.post(f"{server.base_url}/responses", json=body, timeout=10)
    assert reply.status_code == 200
    assert reply.headers["content-type"].startswith("text/event-stream")
    events = []
    for block in reply.text.strip().split("\n\n"):
        name, data = (line.split(": ", 1)[1] for line in block.split("\n"))
        event = json.loads(data)
        assert event["type"] == name
        events.append(event)
    return events


def test_the_openai_server_plays_legs_as_responses_api_events() -> None:
    with ScriptedOpenAI() as server:
        server.script(
            [
                text("Let me "),
                text("run it."),
                tool_calls(tool_call("shell", {"cmd": "ls"}, id="c1")),
            ],
            [text("Done."), done(usage={"prompt_tokens": 9, "completion_tokens": 3})],
        )
        first, second = responses_events(server), responses_events(server)
        assert [r.path for r in server.legs_received] == ["/v1/responses"] * 2
    assert [e["type"] for e in first] == [
        "response.created",
        "response.output_item.added",
        "response.output_text.delta",
        "response.output_text.delta",
        "response.output_item.done",
        "response.output_item.done",
        "response.completed",
    ]
    assert "".join(e["delta"] for e in first if "delta" in e) == "Let me run it."
    message, call = (e["item"] for e in first if e["type"] == "response.output_item.done")
    assert message["content"] == [
        {"type": "output_text", "text": "Let me run it.", "annotations": []}
    ]
    assert (call["type"], call["call_id"], call["name"]) == ("function_call", "c1", "shell")
    assert json.loads(call["arguments"]) == {"cmd": "ls"}
    completed = second[-1]["response"]
    assert (completed["status"], completed["id"]) == ("completed", "resp_2")
    usage = completed["usage"]
    assert (usage["input_tokens"], usage["output_tokens"], usage["total_tokens"]) == (9, 3, 12)
