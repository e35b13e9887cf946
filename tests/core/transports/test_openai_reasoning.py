"""Reasoning in every form servers send it, and content arrays, over loopback.

The scripted server writes each body 3 bytes at a time; `<think>` tags are split at
every offset across two chunks.
"""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from melgui.core.protocol.events import (
    Done,
    ReasoningDelta,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCalls,
)
from melgui.core.protocol.messages import Message
from melgui.core.protocol.transport import LegRequest
from melgui.core.transports.openai_compat import OpenAITransport
from tests.fakes import (
    ScriptedOpenAI,
    Step,
    delta,
    done,
    http_error,
    pieces,
    tool_call,
    tool_calls,
)
from tests.fakes.legs import play_leg

THOUGHT = "The user greets; ünïcode 😀 in thought."
ANSWER = "Hello — 世界!"


def request(messages: list[dict[str, Any]] | None = None) -> LegRequest:
    return LegRequest(
        model="reasoner",
        messages=messages or [{"role": "user", "content": "hi"}],
        tools=(),
        tool_role="assistant",
        cwd="/project",
    )


async def run(server: ScriptedOpenAI, *steps: Step, **options: Any) -> list[StreamEvent]:
    events, _ = await play_leg(
        server, partial(OpenAITransport, api_key="k"), request(), steps, **options
    )
    return events


def split(events: list[StreamEvent]) -> tuple[str, str]:
    reasoning = "".join(e.text for e in events if isinstance(e, ReasoningDelta))
    answer = "".join(e.text for e in events if isinstance(e, TextDelta))
    return reasoning, answer


@pytest.mark.parametrize("field", ["reasoning_content", "reasoning", "reasoning_text"])
async def test_reasoning_fields(scripted_openai: ScriptedOpenAI, field: str) -> None:
    events = await run(
        scripted_openai,
        delta(role="assistant", **{field: THOUGHT[:10]}),
        delta(**{field: THOUGHT[10:]}, content=None),
        delta(content=ANSWER[:4]),
        delta(content=ANSWER[4:]),
        done(),
    )
    assert split(events) == (THOUGHT, ANSWER)
    first_answer = next(i for i, e in enumerate(events) if isinstance(e, TextDelta))
    assert all(isinstance(e, ReasoningDelta) for e in events[:first_answer])
    assert isinstance(events[-1], Done)


async def test_same_reasoning_under_two_names_is_taken_once(
    scripted_openai: ScriptedOpenAI,
) -> None:
    events = await run(
        scripted_openai, delta(reasoning="abc", reasoning_content="abc"), delta(content="x"), done()
    )
    assert split(events) == ("abc", "x")


async def test_mistral_content_array_with_thinking_parts(scripted_openai: ScriptedOpenAI) -> None:
    events = await run(
        scripted_openai,
        delta(content=[{"type": "thinking", "thinking": [{"type": "text", "text": THOUGHT}]}]),
        delta(content=[{"type": "text", "text": ANSWER[:3]}]),
        delta(
            content=[{"type": "text", "text": ANSWER[3:6]}, {"type": "text", "text": ANSWER[6:]}]
        ),
        done(),
    )
    assert split(events) == (THOUGHT, ANSWER)


async def test_unknown_content_parts_are_shown_not_dropped(
    scripted_openai: ScriptedOpenAI,
) -> None:
    events = await run(
        scripted_openai,
        delta(content=[{"type": "text", "text": "before "}, {"type": "audio", "data": "…"}]),
        delta(content=[{"type": "text", "text": "after"}]),
        done(),
    )
    _, answer = split(events)
    assert answer.startswith("before ") and answer.endswith("after")
    assert "audio" in answer


async def test_thinking_as_a_plain_string_part(scripted_openai: ScriptedOpenAI) -> None:
    events = await run(
        scripted_openai, delta(content=[{"type": "thinking", "thinking": "hmm"}]), done()
    )
    assert split(events) == ("hmm", "")


TAGGED = f"<think>{THOUGHT}</think>\n\n{ANSWER}"


@pytest.mark.parametrize("offset", range(1, len(TAGGED)))
async def test_think_tags_split_at_every_offset(
    scripted_openai: ScriptedOpenAI, offset: int
) -> None:
    events = await run(
        scripted_openai, delta(content=TAGGED[:offset]), delta(content=TAGGED[offset:]), done()
    )
    assert split(events) == (THOUGHT, ANSWER)


async def test_think_tags_one_character_per_chunk(scripted_openai: ScriptedOpenAI) -> None:
    steps = [delta(content=char) for char in TAGGED]
    events = await run(scripted_openai, pieces(1), *steps, done())
    assert split(events) == (THOUGHT, ANSWER)


async def test_a_think_tag_after_answer_text_is_answer(scripted_openai: ScriptedOpenAI) -> None:
    events = await run(scripted_openai, delta(content="Use <think> tags."), done())
    assert split(events) == ("", "Use <think> tags.")


async def test_a_held_back_tag_start_is_text_at_the_end(scripted_openai: ScriptedOpenAI) -> None:
    events = await run(scripted_openai, delta(content="  <thi"), done())
    assert split(events)[1] == "  <thi"


async def test_reasoning_then_tool_calls(scripted_openai: ScriptedOpenAI) -> None:
    call = tool_call("read_file", {"path": "a.py"}, id="c1")
    events = await run(scripted_openai, delta(reasoning_content="look first"), tool_calls(call))
    assert split(events) == ("look first", "")
    assert events[-1] == ToolCalls((ToolCall("c1", "read_file", call.arguments),))


async def test_reasoning_in_a_plain_json_answer(scripted_openai: ScriptedOpenAI) -> None:
    """A server that ignores `stream: true` and answers one chat.completion."""
    body = {
        "object": "chat.completion",
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "reasoning_content": "why", "content": "so"},
                "finish_reason": "stop",
            }
        ],
    }
    events = await run(scripted_openai, http_error(200, body))
    assert split(events) == ("why", "so")
    assert isinstance(events[-1], Done)


def test_reasoning_goes_back_only_when_the_connection_says_so() -> None:
    history = [
        Message.user("hi").to_wire(),
        Message.assistant("hello", reasoning="they greet").to_wire(),
    ]
    default = OpenAITransport("http://127.0.0.1:9/v1", None).request_body(request(history))
    assert all("reasoning_content" not in m for m in default["messages"])
    sending = OpenAITransport("http://127.0.0.1:9/v1", None, send_reasoning=True)
    body = sending.request_body(request(history))
    assert body["messages"][-1]["reasoning_content"] == "they greet"


def test_reasoning_survives_storage_form() -> None:
    message = Message.assistant("a", reasoning="r")
    assert Message.from_json(message.to_json()) == message
    assert message.to_json()["reasoning"] == "r"
