"""The Mel relay transport against the scripted relay over loopback."""

from __future__ import annotations

from functools import partial
from typing import Any

import pytest

from melgui.core.protocol.catalog import tools_for_role
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
from melgui.core.protocol.transport import LegRequest, TransportError
from melgui.core.transports.relay import RelayTransport
from tests.fakes import (
    ScriptedRelay,
    Step,
    comment,
    done,
    drop,
    error_event,
    framing,
    http_error,
    pause,
    raw,
    sse,
    text,
    tool_call,
    tool_calls,
)
from tests.fakes.legs import play_leg
from tests.fakes.process_memory import peak_rss_bytes, reset_peak, rss_bytes

KEY = "mel-key-0123456789"
UNICODE = "Zürich → 東京 🚆"
USAGE = {"prompt_tokens": 30, "completion_tokens": 4, "total_tokens": 34}


def leg_request(model: str = "mel-default") -> LegRequest:
    return LegRequest(
        model=model,
        messages=[{"role": "user", "content": "list the files"}],
        tools=tools_for_role("worker"),
        tool_role="worker",
        cwd="/home/me/project",
    )


async def run_leg(
    server: ScriptedRelay, *steps: Step, request: LegRequest | None = None, **options: Any
) -> tuple[list[StreamEvent], list[WireEntry]]:
    return await play_leg(
        server, partial(RelayTransport, api_key=KEY), request or leg_request(), steps, **options
    )


async def test_text_then_tool_calls_with_usage(scripted_relay: ScriptedRelay) -> None:
    read = tool_call("read_file", {"path": "ü.txt"}, id="c1")
    ls = tool_call("list_dir", {}, id="c2")
    events, _ = await run_leg(scripted_relay, text(UNICODE), tool_calls(read, ls, usage=USAGE))
    assert events == [
        TextDelta(UNICODE),
        ToolCalls(
            (ToolCall("c1", "read_file", read.arguments), ToolCall("c2", "list_dir", "{}")),
            Usage(**USAGE),
        ),
    ]


async def test_done_with_usage_and_finish_reason(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, text("a"), text("b"), done(usage=USAGE))
    assert events == [TextDelta("ab"), Done(Usage(**USAGE), "stop")]


async def test_done_without_data_fields(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, raw("event: done\n\n"))
    assert events == [Done()]


async def test_request_body_and_headers(scripted_relay: ScriptedRelay) -> None:
    request = leg_request()
    await run_leg(scripted_relay, done(), request=request)
    (sent,) = scripted_relay.legs_received
    assert (sent.method, sent.path) == ("POST", "/v1/agent/stream")
    assert sent.authorization == f"Bearer {KEY}"
    assert sent.headers["accept"] == "text/event-stream"
    assert sent.json == {
        "model": "mel-default",
        "messages": request.messages,
        "tools": [tool.to_relay() for tool in tools_for_role("worker")],
        "tool_role": "worker",
        "tool_choice": "auto",
        "cwd": "/home/me/project",
    }


async def test_empty_model_lets_the_relay_choose(scripted_relay: ScriptedRelay) -> None:
    await run_leg(scripted_relay, done(), request=leg_request(model=""))
    assert "model" not in scripted_relay.legs_received[0].json


async def test_configurable_stream_path() -> None:
    with ScriptedRelay(stream_path="/agent/v2/stream") as relay:
        events, _ = await run_leg(relay, text("hi"), done(), stream_path="agent/v2/stream")
    assert events == [TextDelta("hi"), Done(None, "stop")]


async def test_calls_without_ids_get_unique_ids(scripted_relay: ScriptedRelay) -> None:
    calls = (tool_call("recall", None, id=None), tool_call("recall", None, id=None))
    events, _ = await run_leg(scripted_relay, tool_calls(*calls))
    final = events[-1]
    assert isinstance(final, ToolCalls)
    assert len({call.id for call in final.calls}) == 2
    assert all(call.id.startswith("call_") for call in final.calls)


async def test_arguments_sent_as_an_object_are_encoded(scripted_relay: ScriptedRelay) -> None:
    payload = {"calls": [{"id": "c1", "name": "grep", "arguments": {"pattern": "x"}}]}
    events, _ = await run_leg(scripted_relay, sse(payload, event="tool_calls"))
    assert events == [ToolCalls((ToolCall("c1", "grep", '{"pattern": "x"}'),))]


async def test_error_event(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(
        scripted_relay, text("so far"), error_event("upstream overloaded", "overloaded", True)
    )
    assert events == [
        TextDelta("so far"),
        StreamError("upstream overloaded (overloaded)", retryable=True, events_seen=True),
    ]


async def test_unknown_events_and_comments_go_to_the_wire_log_only(
    scripted_relay: ScriptedRelay,
) -> None:
    events, wire = await run_leg(
        scripted_relay,
        comment("ping"),
        sse({"step": 1}, event="progress"),
        sse("not even json", event="heartbeat"),
        text("a"),
        done(),
    )
    assert events == [TextDelta("a"), Done(None, "stop")]
    logged = [entry.text for entry in wire if entry.direction == "event"]
    assert ":ping" in logged and 'event: progress\ndata: {"step": 1}' in logged


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
async def test_crlf_and_cr_framing(scripted_relay: ScriptedRelay, newline: str) -> None:
    events, _ = await run_leg(scripted_relay, framing(newline), text(UNICODE), done())
    assert events == [TextDelta(UNICODE), Done(None, "stop")]


async def test_malformed_json_is_an_error(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, text("a"), raw('event: delta\ndata: {"text": \n\n'))
    error = events[-1]
    assert isinstance(error, StreamError)
    assert "malformed JSON in a 'delta' event" in error.message
    assert error.events_seen and not error.retryable


async def test_tool_calls_without_a_list_is_an_error(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, sse({"calls": "read_file"}, event="tool_calls"))
    assert isinstance(events[0], StreamError) and "without a list" in events[0].message


async def test_stream_ending_without_done(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, text("half an answer"))
    assert events[-1] == StreamError(
        "the stream ended before the leg finished", retryable=True, events_seen=True
    )
    events, _ = await run_leg(scripted_relay, comment())
    assert events == [StreamError("the stream ended before the leg finished", retryable=True)]


async def test_drop_mid_stream(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, text("a"), drop())
    error = events[-1]
    assert isinstance(error, StreamError)
    assert error.message.startswith("the stream ended before the leg finished")
    assert error.retryable and error.events_seen


async def test_drop_before_the_reply(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, drop())
    assert isinstance(events[0], StreamError)
    assert events[0].retryable and not events[0].events_seen


async def test_401_carries_the_servers_message(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, http_error(401, {"message": "API key revoked"}))
    assert events == [StreamError("HTTP 401 Unauthorized: API key revoked", status=401)]


async def test_401_from_a_server_checking_the_key() -> None:
    with ScriptedRelay(api_key="another-key") as relay:
        events, _ = await run_leg(relay, done())
    assert events == [StreamError("HTTP 401 Unauthorized: Invalid API key", status=401)]


async def test_429_with_retry_after(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(
        scripted_relay,
        http_error(429, {"error": {"message": "too many legs"}}, {"Retry-After": "1.5"}),
    )
    assert events == [
        StreamError(
            "HTTP 429 Too Many Requests: too many legs", status=429, retryable=True, retry_after=1.5
        )
    ]


async def test_402_quota_is_not_retryable(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, http_error(402, "Quota exhausted for this month"))
    assert events == [
        StreamError("HTTP 402 Payment Required: Quota exhausted for this month", status=402)
    ]


async def test_502_is_retryable(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, http_error(502, None))
    assert events == [StreamError("HTTP 502 Bad Gateway", status=502, retryable=True)]


async def test_json_reply_instead_of_a_stream(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, http_error(200, {"error": {"message": "nope"}}))
    assert events == [StreamError("the relay answered with JSON instead of an event stream: nope")]


async def test_web_page_instead_of_a_stream(scripted_relay: ScriptedRelay) -> None:
    page = http_error(200, "<html><title>Sign in</title></html>", {"Content-Type": "text/html"})
    events, _ = await run_leg(scripted_relay, page)
    assert events == [
        StreamError(
            "the server answered with a web page instead of an event stream "
            "(is the URL right?): <html><title>Sign in</title></html>"
        )
    ]


async def test_stalled_stream_times_out(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(scripted_relay, text("a"), pause(30), read_timeout=0.3)
    error = events[-1]
    assert isinstance(error, StreamError)
    assert error.message == "timed out: the server sent nothing for 0.3 s"
    assert error.retryable and error.events_seen


async def test_event_over_the_limit_is_an_error(scripted_relay: ScriptedRelay) -> None:
    events, _ = await run_leg(
        scripted_relay, text("a"), text("x" * 3000), done(), max_event_bytes=2048
    )
    assert events == [
        TextDelta("a"),
        StreamError("an event of the stream is larger than 2 KB", events_seen=True),
    ]


async def test_ten_megabyte_event_keeps_memory_bounded(scripted_relay: ScriptedRelay) -> None:
    scripted_relay.chunk_size = 64 * 1024
    big = "ab" * (5 * 1024 * 1024)
    before = rss_bytes()
    reset_peak()
    events, _ = await run_leg(scripted_relay, text(big), done())
    growth = peak_rss_bytes() - before
    assert events == [TextDelta(big), Done(None, "stop")]
    assert growth < 200 * 1024 * 1024, f"peak RSS grew by {growth / 2**20:.0f} MB"


async def test_wire_log_never_holds_the_key(scripted_relay: ScriptedRelay) -> None:
    request = leg_request()
    request.messages.append({"role": "user", "content": f"here: {KEY}"})
    _, wire = await run_leg(scripted_relay, text("a"), done(), request=request)
    assert [entry.direction for entry in wire[:2]] == ["request", "response"]
    assert wire[0].text.startswith(f"POST {scripted_relay.base_url}/v1/agent/stream\n")
    assert all(KEY not in entry.text for entry in wire)
    assert scripted_relay.legs_received[0].messages[-1]["content"] == f"here: {KEY}"


async def test_list_models(scripted_relay: ScriptedRelay) -> None:
    transport = RelayTransport(scripted_relay.base_url, KEY)
    models = await transport.list_models()
    await transport.aclose()
    assert [(m.id, m.supports_tools, m.name) for m in models] == [
        ("mel-default", True, "Mel default"),
        ("mel-chat", False, "Mel chat"),
    ]
    request = scripted_relay.requests[-1]
    assert (request.method, request.path, request.authorization) == (
        "GET",
        "/v1/models",
        f"Bearer {KEY}",
    )


async def test_list_models_failure(scripted_relay: ScriptedRelay) -> None:
    scripted_relay.models = None
    transport = RelayTransport(scripted_relay.base_url, KEY)
    with pytest.raises(TransportError, match="HTTP 404 Not Found") as caught:
        await transport.list_models()
    await transport.aclose()
    assert caught.value.status == 404


async def test_injected_client_is_not_closed(scripted_relay: ScriptedRelay) -> None:
    import httpx

    async with httpx.AsyncClient() as client:
        transport = RelayTransport(scripted_relay.base_url, KEY, client=client)
        scripted_relay.script([done()])
        assert [e async for e in transport.stream(leg_request())] == [Done(None, "stop")]
        await transport.aclose()
        assert not client.is_closed
