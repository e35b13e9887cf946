"""Each leg has caps on its text, reasoning, pieces and tool-call arguments."""

from __future__ import annotations

import pytest

from melgui.core.protocol.catalog import BASE_TOOLS
from melgui.core.protocol.events import (
    Done,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCall,
    ToolCalls,
)
from melgui.core.protocol.transport import LegRequest, TransportError
from melgui.core.transports.http.leg_bounds import LegBudget, LegLimits, LegTooLarge
from melgui.core.transports.openai_compat import OpenAITransport
from melgui.core.transports.relay import RelayTransport
from tests.fakes import ScriptedOpenAI, ScriptedRelay, done, http_error, sse, text
from tests.fakes.legs import play_leg

MB = 1024 * 1024
KEY = "sk-test-Secret0123456789"
REQUEST = LegRequest(
    model="m",
    messages=[{"role": "user", "content": "hi"}],
    tools=BASE_TOOLS[:3],
    tool_role="assistant",
    cwd="/project",
)


def argument_pieces(total: int, piece: int = MB) -> list[object]:
    first = {"index": 0, "id": "big", "function": {"name": "write_file", "arguments": '{"c": "'}}
    steps: list[object] = [sse({"choices": [{"index": 0, "delta": {"tool_calls": [first]}}]})]
    for _ in range(total // piece):
        fragment = {"index": 0, "function": {"arguments": "x" * piece}}
        steps.append(sse({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}))
    fragment = {"index": 0, "function": {"arguments": '"}'}}
    steps.append(sse({"choices": [{"index": 0, "delta": {"tool_calls": [fragment]}}]}))
    steps.append(sse({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
    return steps


async def test_twenty_megabytes_of_arguments_in_pieces_still_work(
    scripted_openai: ScriptedOpenAI,
) -> None:
    scripted_openai.chunk_size = 256 * 1024
    events, _ = await play_leg(
        scripted_openai,
        lambda url: OpenAITransport(url, KEY),
        REQUEST,
        tuple(argument_pieces(20 * MB)),  # type: ignore[arg-type]
    )
    [calls] = events
    assert isinstance(calls, ToolCalls) and len(calls.calls[0].arguments) > 20 * MB


async def test_arguments_past_the_cap_end_the_leg_with_a_message(
    scripted_openai: ScriptedOpenAI,
) -> None:
    scripted_openai.chunk_size = 256 * 1024
    events, _ = await play_leg(
        scripted_openai,
        lambda url: OpenAITransport(url, KEY),
        REQUEST,
        tuple(argument_pieces(33 * MB)),  # type: ignore[arg-type]
    )
    [error] = events
    assert isinstance(error, StreamError) and not error.retryable
    assert error.message == (
        "the model's tool-call arguments in this leg passed 32 MB; melgui stopped reading the "
        "stream"
    )


def test_the_budget_names_each_cap() -> None:
    limits = LegLimits(text=10, reasoning=5, pieces=4, arguments=8)
    budget = LegBudget(limits)
    budget.count(TextDelta("0123456789"))
    with pytest.raises(LegTooLarge, match="answer text in this leg passed 10 bytes"):
        budget.count(TextDelta("!"))
    with pytest.raises(LegTooLarge, match="reasoning in this leg passed 5 bytes"):
        LegBudget(limits).count(ReasoningDelta("123456"))
    budget = LegBudget(limits)
    for _ in range(4):
        budget.count(TextDelta(""))
    with pytest.raises(LegTooLarge, match="more than 4 pieces"):
        budget.count(ReasoningDelta(""))
    with pytest.raises(LegTooLarge, match="tool-call arguments in this leg passed 8 bytes"):
        LegBudget(limits).count(ToolCalls((ToolCall("a", "x", '{"a": "12"}'),)))
    LegBudget(limits).count(Done())


async def test_the_key_is_hidden_in_text_the_model_repeats(scripted_relay: ScriptedRelay) -> None:
    events, wire = await play_leg(
        scripted_relay,
        lambda url: RelayTransport(url, KEY),
        REQUEST,
        (text(f"your key is {KEY}."), done()),
    )
    assert events[0] == TextDelta("your key is «redacted».")
    assert all(KEY not in entry.text for entry in wire)


async def test_a_key_echoed_in_a_model_list_error_is_hidden(
    scripted_openai: ScriptedOpenAI,
) -> None:
    escaped = KEY.replace("-", "\\u002d")
    message = f"Incorrect API key provided: {KEY} ({escaped})"
    scripted_openai.models_error = http_error(401, {"error": {"message": message}})
    transport = OpenAITransport(scripted_openai.base_url, KEY)
    try:
        with pytest.raises(TransportError) as caught:
            await transport.list_models()
    finally:
        await transport.aclose()
    assert "Incorrect API key provided: «redacted» («redacted»)" in str(caught.value)
