"""The OpenAI-compatible transport over loopback, bodies sent in small pieces.

Each server variant of docs/wire-protocol.md §3 has its own test; the scripted server
writes every body 3 bytes at a time (so UTF-8 characters and CRLF pairs are split).
"""

from __future__ import annotations

import asyncio
import email.utils
import time
from functools import partial
from typing import Any

import pytest

from melgui.core.config.redaction import REDACTED
from melgui.core.protocol.catalog import BASE_TOOLS
from melgui.core.protocol.events import (
    Done,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCalls,
    Usage,
    WireEntry,
)
from melgui.core.protocol.transport import LegRequest, ToolChoice, TransportError
from melgui.core.transports.instructions import agent_instructions
from melgui.core.transports.openai_compat import OpenAITransport
from tests.fakes import (
    ScriptedOpenAI,
    Step,
    comment,
    done,
    drop,
    error_event,
    framing,
    http_error,
    pause,
    pieces,
    raw,
    sse,
    text,
    tool_call,
    tool_calls,
)
from tests.fakes.legs import play_leg
from tests.fakes.process_memory import peak_rss_bytes, reset_peak, rss_bytes

KEY = "sk-test-secret-123"
UNICODE = "Grüße, 世界 😀 — done."
READ = tool_call("read_file", {"path": "späß/ü.py"}, id="call_a")
GREP = tool_call("grep", {"pattern": "def .*\\("}, id="call_b")
USAGE = {"prompt_tokens": 12, "completion_tokens": 5, "total_tokens": 17}


def leg_request(
    tools: tuple[Any, ...] = BASE_TOOLS[:3], tool_choice: ToolChoice = "auto"
) -> LegRequest:
    return LegRequest(
        model="gpt-test",
        messages=[{"role": "user", "content": "hi"}],
        tools=tools,
        tool_role="assistant",
        cwd="/project",
        tool_choice=tool_choice,
    )


async def run_leg(
    server: ScriptedOpenAI,
    *steps: Step,
    request: LegRequest | None = None,
    **options: Any,
) -> tuple[list[StreamEvent], list[WireEntry]]:
    return await play_leg(
        server, partial(OpenAITransport, api_key=KEY), request or leg_request(), steps, **options
    )


def texts(events: list[StreamEvent]) -> str:
    return "".join(e.text for e in events if isinstance(e, TextDelta))


def expected(*calls: Any) -> tuple[ToolCall, ...]:
    return tuple(ToolCall(c.id, c.name, c.arguments) for c in calls)


def chunk(
    delta: dict[str, Any] | None = None,
    finish: str | None = None,
    usage: dict[str, int] | None = None,
) -> dict[str, Any]:
    body: dict[str, Any] = {"object": "chat.completion.chunk"}
    body["choices"] = (
        [] if delta is None else [{"index": 0, "delta": delta, "finish_reason": finish}]
    )
    if usage is not None:
        body["usage"] = usage
    return body


# --- the variants ------------------------------------------------------------------


async def test_standard_stream_text_then_calls_with_usage(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(
        scripted_openai, text(UNICODE[:9]), text(UNICODE[9:]), tool_calls(READ, GREP, usage=USAGE)
    )
    assert texts(events) == UNICODE
    assert events[-1] == ToolCalls(expected(READ, GREP), Usage(**USAGE))


async def test_missing_index(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, tool_calls(READ, GREP, style="no_index"))
    assert events == [ToolCalls(expected(READ, GREP))]


async def test_every_call_at_index_zero(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, tool_calls(READ, GREP, style="same_index"))
    assert events == [ToolCalls(expected(READ, GREP))]


@pytest.mark.parametrize("style", ["one_chunk", "whole"])
async def test_whole_calls_in_one_chunk(scripted_openai: ScriptedOpenAI, style: Any) -> None:
    events, _ = await run_leg(scripted_openai, text("ok"), tool_calls(READ, GREP, style=style))
    assert events == [TextDelta("ok"), ToolCalls(expected(READ, GREP))]


async def test_arguments_split_across_chunks_one_byte_at_a_time(
    scripted_openai: ScriptedOpenAI,
) -> None:
    events, _ = await run_leg(scripted_openai, pieces(1), tool_calls(READ, GREP, piece=1))
    assert events == [ToolCalls(expected(READ, GREP))]


async def test_usage_in_a_last_chunk_without_choices(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, text("fine"), done(usage=USAGE))
    assert events == [TextDelta("fine"), Done(Usage(**USAGE), "stop")]


async def test_finish_reason_stop_although_tools_were_called(
    scripted_openai: ScriptedOpenAI,
) -> None:
    events, _ = await run_leg(scripted_openai, tool_calls(READ, finish_reason="stop"))
    assert events == [ToolCalls(expected(READ))]


async def test_comment_lines_are_ignored_but_logged(scripted_openai: ScriptedOpenAI) -> None:
    events, wire = await run_leg(
        scripted_openai, comment("OPENROUTER PROCESSING"), text("a"), comment(), done()
    )
    assert events == [TextDelta("a"), Done(None, "stop")]
    assert ":OPENROUTER PROCESSING" in [entry.text for entry in wire if entry.direction == "event"]


async def test_error_object_mid_stream(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(
        scripted_openai, text("partial"), error_event("Provider overloaded", code="overloaded")
    )
    assert events[0] == TextDelta("partial")
    error = events[-1]
    assert isinstance(error, StreamError)
    assert error.message == "Provider overloaded (overloaded)"
    assert error.retryable and error.events_seen


async def test_error_event_name_mid_stream(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, sse({"message": "bad key"}, event="error"))
    assert events == [StreamError("bad key")]


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
async def test_crlf_and_cr_framing(scripted_openai: ScriptedOpenAI, newline: str) -> None:
    events, _ = await run_leg(
        scripted_openai, framing(newline), text(UNICODE), comment(), tool_calls(READ, usage=USAGE)
    )
    assert events == [TextDelta(UNICODE), ToolCalls(expected(READ), Usage(**USAGE))]


async def test_stream_ending_without_done_marker(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, text("a"), tool_calls(READ, end_marker=False))
    assert events == [TextDelta("a"), ToolCalls(expected(READ))]
    events, _ = await run_leg(scripted_openai, text("b"), done(end_marker=False))
    assert events == [TextDelta("b"), Done(None, "stop")]


async def test_no_done_marker_and_no_finish_reason_but_complete_arguments(
    scripted_openai: ScriptedOpenAI,
) -> None:
    events, _ = await run_leg(
        scripted_openai, tool_calls(READ, finish_reason=None, end_marker=False)
    )
    assert events == [ToolCalls(expected(READ))]


async def test_calls_without_ids_get_unique_ids(scripted_openai: ScriptedOpenAI) -> None:
    first = tool_call("list_panes", None, id=None)
    second = tool_call("list_panes", None, id=None)
    events, _ = await run_leg(scripted_openai, tool_calls(first, second))
    final = events[-1]
    assert isinstance(final, ToolCalls)
    ids = [call.id for call in final.calls]
    assert len(set(ids)) == 2 and all(i.startswith("call_") for i in ids)
    assert [call.arguments for call in final.calls] == ["{}", "{}"]


async def test_legacy_function_call_delta(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(
        scripted_openai,
        sse(chunk({"function_call": {"name": "grep", "arguments": '{"pattern"'}})),
        sse(chunk({"function_call": {"arguments": ': "x"}'}}, finish="function_call")),
        sse("[DONE]"),
    )
    final = events[-1]
    assert isinstance(final, ToolCalls)
    assert (final.calls[0].name, final.calls[0].arguments) == ("grep", '{"pattern": "x"}')


async def test_plain_json_reply_instead_of_a_stream(scripted_openai: ScriptedOpenAI) -> None:
    completion = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": "Looking.",
                    "tool_calls": [READ_WIRE],
                },
                "finish_reason": "tool_calls",
            }
        ],
        "usage": USAGE,
    }
    events, _ = await run_leg(scripted_openai, http_error(200, completion))
    assert events == [TextDelta("Looking."), ToolCalls(expected(READ), Usage(**USAGE))]


READ_WIRE = {
    "id": READ.id,
    "type": "function",
    "function": {"name": READ.name, "arguments": READ.arguments},
}


# --- faults ------------------------------------------------------------------------


CUT_CHUNKS = (
    sse(chunk({"tool_calls": [{"index": 0, "id": "c1", "function": {"name": "write_file"}}]})),
    sse(chunk({"tool_calls": [{"index": 0, "function": {"arguments": '{"path": "a.txt", "con'}}]})),
)


async def test_body_ending_mid_arguments_executes_nothing(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, text("writing"), *CUT_CHUNKS)
    assert not any(isinstance(e, ToolCalls) for e in events)
    error = events[-1]
    assert isinstance(error, StreamError)
    assert error.message == "the stream ended before the leg finished"
    assert error.retryable and error.events_seen


async def test_connection_dropped_mid_arguments_executes_nothing(
    scripted_openai: ScriptedOpenAI,
) -> None:
    events, _ = await run_leg(scripted_openai, *CUT_CHUNKS, drop())
    assert len(events) == 1
    error = events[0]
    assert isinstance(error, StreamError)
    assert error.message.startswith("the stream ended before the leg finished")
    assert error.retryable and not error.events_seen


async def test_connection_dropped_before_any_reply(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, drop())
    error = events[0]
    assert isinstance(error, StreamError)
    assert error.retryable and not error.events_seen and error.status is None


async def test_empty_body_is_a_failure(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai)
    assert events == [StreamError("the stream ended before the leg finished", retryable=True)]


async def test_429_with_retry_after_seconds(scripted_openai: ScriptedOpenAI) -> None:
    body = {"error": {"message": "Rate limit reached", "type": "rate_limit_error"}}
    events, _ = await run_leg(scripted_openai, http_error(429, body, {"Retry-After": "7"}))
    assert events == [
        StreamError(
            "HTTP 429 Too Many Requests: Rate limit reached",
            status=429,
            retryable=True,
            retry_after=7.0,
        )
    ]


async def test_429_with_retry_after_http_date(scripted_openai: ScriptedOpenAI) -> None:
    when = email.utils.formatdate(time.time() + 30, usegmt=True)
    events, _ = await run_leg(scripted_openai, http_error(429, "slow down", {"Retry-After": when}))
    error = events[0]
    assert isinstance(error, StreamError)
    assert error.retry_after is not None and 20 < error.retry_after <= 30
    assert error.message == "HTTP 429 Too Many Requests: slow down"


async def test_401_carries_the_servers_message(scripted_openai: ScriptedOpenAI) -> None:
    body = {"error": {"message": "Incorrect API key provided", "code": "invalid_api_key"}}
    events, _ = await run_leg(scripted_openai, http_error(401, body))
    assert events == [StreamError("HTTP 401 Unauthorized: Incorrect API key provided", status=401)]


@pytest.mark.parametrize(
    ("status", "body", "message", "retryable"),
    [
        (500, "<html><body>\n<h1>Internal  error</h1></body></html>", "<html><body> <h1>", True),
        (503, {"message": "warming up"}, "warming up", True),
        (
            400,
            {"detail": [{"msg": "field required"}, {"msg": "bad"}]},
            "field required; bad",
            False,
        ),
        (402, {"error": "quota exhausted"}, "quota exhausted", False),
    ],
)
async def test_http_errors(
    scripted_openai: ScriptedOpenAI, status: int, body: Any, message: str, retryable: bool
) -> None:
    events, _ = await run_leg(scripted_openai, http_error(status, body))
    error = events[0]
    assert isinstance(error, StreamError)
    assert message in error.message and str(status) in error.message
    assert (error.status, error.retryable, error.events_seen) == (status, retryable, False)


async def test_stalled_stream_times_out(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, text("a"), pause(30), read_timeout=0.3)
    error = events[-1]
    assert isinstance(error, StreamError)
    assert "timed out" in error.message and "0.3 s" in error.message
    assert error.retryable and error.events_seen


async def test_server_that_never_answers_times_out(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, pause(30), read_timeout=0.3)
    assert isinstance(events[0], StreamError) and "timed out" in events[0].message
    assert not events[0].events_seen


async def test_malformed_json_chunk(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, text("a"), raw('data: {"choices": [\n\n'))
    error = events[-1]
    assert isinstance(error, StreamError)
    assert "malformed JSON" in error.message and error.events_seen


async def test_event_over_the_limit_is_an_error(scripted_openai: ScriptedOpenAI) -> None:
    events, _ = await run_leg(scripted_openai, text("x" * 5000), done(), max_event_bytes=1024)
    assert events == [StreamError("an event of the stream is larger than 1 KB")]


async def test_ten_megabyte_event_keeps_memory_bounded(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.chunk_size = 64 * 1024
    big = "é" * (5 * 1024 * 1024)  # 10 MB of UTF-8
    before = rss_bytes()
    reset_peak()
    events, _ = await run_leg(scripted_openai, text(big), done())
    growth = peak_rss_bytes() - before
    assert events == [TextDelta(big), Done(None, "stop")]
    assert growth < 200 * 1024 * 1024, f"peak RSS grew by {growth / 2**20:.0f} MB"


async def test_connection_refused_is_retryable() -> None:
    with ScriptedOpenAI() as server:
        url = server.base_url
    transport = OpenAITransport(url, KEY)
    events = [event async for event in transport.stream(leg_request())]
    await transport.aclose()
    assert len(events) == 1 and isinstance(events[0], StreamError)
    assert events[0].message.startswith("could not connect to")
    assert events[0].retryable and not events[0].events_seen


async def test_invalid_url_is_not_retryable() -> None:
    transport = OpenAITransport("localhost:11434/v1", KEY)
    events = [event async for event in transport.stream(leg_request())]
    await transport.aclose()
    assert isinstance(events[0], StreamError) and not events[0].retryable


# --- requests ----------------------------------------------------------------------


async def test_a_conversation_with_its_own_system_message_keeps_it(
    scripted_openai: ScriptedOpenAI,
) -> None:
    request = leg_request()
    request.messages.insert(0, {"role": "system", "content": "Be terse."})
    await run_leg(scripted_openai, text("a"), done(), request=request)
    assert scripted_openai.legs_received[0].json["messages"] == request.messages


async def test_request_body_headers_and_redacted_wire_log(scripted_openai: ScriptedOpenAI) -> None:
    request = leg_request(tool_choice={"type": "function", "function": {"name": "grep"}})
    request.messages.append({"role": "user", "content": f"my key is {KEY}"})
    _, wire = await run_leg(
        scripted_openai,
        text("a"),
        done(),
        request=request,
        extra_headers={"HTTP-Referer": "https://melgui.test"},
    )
    (sent,) = scripted_openai.legs_received
    assert sent.method == "POST" and sent.path == "/v1/chat/completions"
    assert sent.authorization == f"Bearer {KEY}"
    assert sent.headers["accept"] == "text/event-stream"
    assert sent.headers["http-referer"] == "https://melgui.test"
    system = sent.json["messages"][0]
    assert system == {
        "role": "system",
        "content": agent_instructions(request.tool_role, request.cwd),
    }
    assert request.cwd in system["content"]
    assert sent.json == {
        "model": "gpt-test",
        "messages": [system, *request.messages],
        "stream": True,
        "stream_options": {"include_usage": True},
        "tools": [tool.to_openai() for tool in BASE_TOOLS[:3]],
        "tool_choice": {"type": "function", "function": {"name": "grep"}},
    }
    directions = [entry.direction for entry in wire]
    assert directions[:2] == ["request", "response"] and "event" in directions
    assert wire[1].text == "HTTP 200 OK"
    assert all(KEY not in entry.text for entry in wire)
    assert REDACTED in wire[0].text


async def test_no_tools_means_no_tools_and_no_tool_choice(scripted_openai: ScriptedOpenAI) -> None:
    await run_leg(scripted_openai, done(), request=leg_request(tools=()))
    sent = scripted_openai.legs_received[0].json
    assert "tools" not in sent and "tool_choice" not in sent


async def test_every_raw_event_reaches_the_wire_log(scripted_openai: ScriptedOpenAI) -> None:
    _, wire = await run_leg(scripted_openai, text("a"), sse({"custom": 1}, event="ping"), done())
    events = [entry.text for entry in wire if entry.direction == "event"]
    assert 'event: ping\ndata: {"custom": 1}' in events
    assert "data: [DONE]" in events


async def test_stopping_early_closes_the_stream(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.script([text("a"), pause(30), done()])
    transport = OpenAITransport(scripted_openai.base_url, KEY)
    stream = transport.stream(leg_request())
    received = []
    async for event in stream:
        received.append(event)
        break
    assert received == [TextDelta("a")]
    await stream.aclose()  # type: ignore[attr-defined]
    # Closed means the HTTP connection is gone, while the transport itself stays open.
    await asyncio.to_thread(scripted_openai.wait_for_streams_closed, 5.0)
    assert [event async for event in stream] == []
    await transport.aclose()


# --- models ------------------------------------------------------------------------


async def test_list_models_applies_the_supported_parameters_filter(
    scripted_openai: ScriptedOpenAI,
) -> None:
    scripted_openai.models = [
        {"id": "z-tools", "supported_parameters": ["tools", "temperature"]},
        {"id": "a-plain", "supported_parameters": ["temperature"]},
        {"id": "m-unknown", "name": "Unknown"},
        {"id": "b-tools", "supported_parameters": ["tools"]},
        {"no": "id"},
    ]
    transport = OpenAITransport(scripted_openai.base_url, KEY)
    models = await transport.list_models()
    await transport.aclose()
    assert [(m.id, m.supports_tools) for m in models] == [
        ("b-tools", True),
        ("z-tools", True),
        ("m-unknown", None),
        ("a-plain", False),
    ]
    assert models[2].name == "Unknown"
    assert scripted_openai.requests[-1].authorization == f"Bearer {KEY}"


async def test_list_models_errors_carry_the_servers_message(
    scripted_openai: ScriptedOpenAI,
) -> None:
    scripted_openai.models_error = http_error(403, {"error": {"message": "key lacks scope"}})
    transport = OpenAITransport(scripted_openai.base_url, KEY)
    with pytest.raises(TransportError, match="key lacks scope") as caught:
        await transport.list_models()
    await transport.aclose()
    assert caught.value.status == 403


async def test_list_models_non_json_answer(scripted_openai: ScriptedOpenAI) -> None:
    scripted_openai.models_error = http_error(200, "<html>hello</html>")
    transport = OpenAITransport(scripted_openai.base_url, KEY)
    with pytest.raises(TransportError, match="did not answer with JSON"):
        await transport.list_models()
    await transport.aclose()
