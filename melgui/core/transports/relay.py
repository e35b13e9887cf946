"""The Mel relay transport: one leg = one POST to the relay's SSE stream (docs/wire-protocol.md §2).

Events: `delta` → TextDelta (its optional `reasoning` → ReasoningDelta), `tool_calls` →
ToolCalls, `done` → Done, `error` → StreamError; any other event name (and comments)
goes to the wire log only.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Mapping
from typing import Any, Unpack

from melgui.core.protocol import bounded_json
from melgui.core.protocol.events import (
    Done,
    ReasoningDelta,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCall,
    ToolCalls,
    Usage,
)
from melgui.core.protocol.transport import LegRequest, ModelInfo, WireSink
from melgui.core.transports.http.endpoint import EndpointOptions, HttpEndpoint
from melgui.core.transports.http.leg import LegFormatError
from melgui.core.transports.http.replies import (
    one_line,
    server_message,
)
from melgui.core.transports.http.sse import SSEEvent
from melgui.core.transports.http.tool_call_assembler import new_call_id
from melgui.core.transports.instructions import with_project_instructions
from melgui.core.transports.reasoning_back import wire_messages

RELAY_EVENTS = ("delta", "tool_calls", "done", "error")


class RelayLegParser:
    """Relay SSE events → stream events (a LegParser)."""

    def on_event(self, event: SSEEvent) -> list[StreamEvent]:
        if event.event not in RELAY_EVENTS:
            return []
        data = _object(event)
        if event.event == "delta":
            text, thinking = data.get("text"), data.get("reasoning")
            events: list[StreamEvent] = []
            if isinstance(thinking, str) and thinking:
                events.append(ReasoningDelta(thinking))
            if isinstance(text, str) and text:
                events.append(TextDelta(text))
            return events
        usage = Usage.from_wire(data.get("usage"))
        if event.event == "tool_calls":
            calls = parse_calls(data.get("calls"))
            return [ToolCalls(calls, usage) if calls else Done(usage, "tool_calls")]
        if event.event == "done":
            reason = data.get("finish_reason")
            return [Done(usage, reason if isinstance(reason, str) else None)]
        return [relay_error(data)]

    def held_back(self) -> list[StreamEvent]:
        return []

    def on_end(self) -> StreamEvent | None:
        return None  # the relay always ends a leg with done, tool_calls or error

    def on_json_body(self, payload: Any) -> list[StreamEvent]:
        message = server_message(json.dumps(payload)) if payload else ""
        return [StreamError(f"the relay answered with JSON instead of an event stream: {message}")]


def _object(event: SSEEvent) -> dict[str, Any]:
    if not event.data.strip():
        return {}
    try:
        data = bounded_json.loads(event.data)
    except bounded_json.JSONTooDeep as exc:
        raise LegFormatError(f"the relay sent a {event.event!r} event of {exc}") from None
    except ValueError:
        raise LegFormatError(
            f"the relay sent malformed JSON in a {event.event!r} event: "
            f"{one_line(event.data, 80)!r}"
        ) from None
    if not isinstance(data, dict):
        raise LegFormatError(f"the relay sent a {event.event!r} event that is not an object")
    return data


def parse_calls(raw: object) -> tuple[ToolCall, ...]:
    """The `calls` of a tool_calls event; a call without id gets a unique one."""
    if not isinstance(raw, list):
        raise LegFormatError("the relay sent a tool_calls event without a list of calls")
    calls = []
    for item in raw:
        if not isinstance(item, Mapping):
            raise LegFormatError(f"the relay sent a tool call that is not an object: {item!r:.80}")
        function = item.get("function")
        source = function if isinstance(function, Mapping) else item  # tolerate the chat shape
        call_id = item.get("id")
        name = source.get("name")
        arguments = source.get("arguments")
        if not isinstance(arguments, str):
            arguments = "" if arguments is None else json.dumps(arguments, ensure_ascii=False)
        calls.append(
            ToolCall(
                call_id if isinstance(call_id, str) and call_id else new_call_id(),
                name if isinstance(name, str) else "",
                arguments if arguments.strip() else "{}",
            )
        )
    return tuple(calls)


def relay_error(data: Mapping[str, Any]) -> StreamError:
    message = data.get("message")
    text = one_line(message) if isinstance(message, str) and message else "the relay failed"
    code = data.get("code")
    if isinstance(code, str | int) and code != "":
        text = f"{text} ({code})"
    status = data.get("status")
    retry_after = data.get("retry_after")
    return StreamError(
        text,
        status=status if isinstance(status, int) and not isinstance(status, bool) else None,
        retryable=data.get("retryable") is True,
        retry_after=float(retry_after) if isinstance(retry_after, int | float) else None,
    )


class RelayTransport(HttpEndpoint):
    """Streams legs from a Mel relay. Never retries (the agent loop does)."""

    name = "relay"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        stream_path: str = "/v1/agent/stream",
        send_reasoning: bool = False,
        **options: Unpack[EndpointOptions],
    ) -> None:
        super().__init__(base_url, api_key, **options)
        self.send_reasoning = send_reasoning
        self.stream_path = "/" + stream_path.lstrip("/")

    def request_body(self, request: LegRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "messages": with_project_instructions(
                wire_messages(request.messages, self.send_reasoning), request.cwd
            ),
            "tools": [tool.to_relay() for tool in request.tools],
            "tool_role": request.tool_role,
            "tool_choice": request.tool_choice,
            "cwd": request.cwd,
        }
        if request.model:  # an empty model lets the relay choose
            body = {"model": request.model, **body}
        return body

    def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        url = self.base_url + self.stream_path
        return self._leg(url, self.request_body(request), RelayLegParser(), wire)

    async def list_models(self) -> list[ModelInfo]:
        return await self._models(f"{self.base_url}/v1/models", "listing the relay's models")
