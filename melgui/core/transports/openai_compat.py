"""The OpenAI-compatible transport: `chat/completions` streaming (docs/wire-protocol.md §3).

For the Meliai API and any OpenAI-compatible server (Ollama, vLLM, llama.cpp, LM
Studio, OpenRouter, …). The leg ends at `data: [DONE]` or at the end of the body. A
body that ends without `[DONE]` and without a `finish_reason` is accepted only when
every tool call's arguments are complete JSON: a cut stream must execute nothing.
"""

from __future__ import annotations

import json
import json.scanner
from collections.abc import AsyncGenerator, AsyncIterator, Callable, Mapping
from contextlib import aclosing
from typing import Any, Unpack, cast

from melgui.core.protocol import bounded_json
from melgui.core.protocol.events import (
    Done,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCalls,
    Usage,
)
from melgui.core.protocol.transport import LegRequest, ModelInfo, WireSink
from melgui.core.transports.http.delta_content import REASONING_FIELDS, DeltaContent
from melgui.core.transports.http.endpoint import EndpointOptions, HttpEndpoint
from melgui.core.transports.http.leg import LegFormatError
from melgui.core.transports.http.replies import (
    is_retryable_status,
    one_line,
)
from melgui.core.transports.http.sse import SSEEvent
from melgui.core.transports.http.tool_call_assembler import MalformedFragment, ToolCallAssembler
from melgui.core.transports.instructions import with_instructions
from melgui.core.transports.reasoning_back import wire_messages

__all__ = ["OpenAILegParser", "OpenAITransport"]

LegEvents = AsyncGenerator[StreamEvent, None]
_RETRYABLE_WORDS = ("rate_limit", "overloaded", "server_error", "timeout", "unavailable")


class OpenAILegParser:
    """chat.completion.chunk events → stream events (a LegParser)."""

    def __init__(self) -> None:
        self.assembler = ToolCallAssembler()
        self.content = DeltaContent()
        self.finish_reason: str | None = None
        self.usage: Usage | None = None
        self.chunks = 0

    def on_event(self, event: SSEEvent) -> list[StreamEvent]:
        payload = _chunk_json(event)
        if payload is not None:  # a plain chunk, the stream's every event but its end
            self.chunks += 1
            return self.on_chunk(payload)
        data = event.data.strip()
        if event.event == "error":
            return [stream_error_from(_loads(data) if data else {})]
        if not data:
            return []
        if data == "[DONE]":
            return [*self.content.flush(), self.final()]
        payload = _loads(data)
        if not isinstance(payload, dict):
            raise LegFormatError(f"the server sent a chunk that is not an object: {data:.80}")
        if payload.get("error"):
            return [stream_error_from(payload)]
        self.chunks += 1
        return self.on_chunk(payload)

    def on_chunk(self, payload: Mapping[str, Any]) -> list[StreamEvent]:
        reported = payload.get("usage")
        usage = Usage.from_wire(reported) if reported is not None else None
        if usage is not None:
            self.usage = usage
        events: list[StreamEvent] = []
        choices = payload.get("choices")
        for choice in choices if isinstance(choices, list) else ():
            if not isinstance(choice, dict) or choice.get("index", 0) not in (0, None):
                continue
            delta = choice.get("delta")
            if isinstance(delta, dict):
                events.extend(self._delta(delta))
            reason = choice.get("finish_reason")
            if isinstance(reason, str) and reason:
                self.finish_reason = reason
        return events

    def _delta(self, delta: Mapping[str, Any]) -> list[StreamEvent]:
        text = self.content.plain(delta)
        if text is not None:  # answer text alone, the most of a stream's deltas
            return [TextDelta(text)] if text else []
        fragments = delta.get("tool_calls")
        legacy = delta.get("function_call")
        try:
            if isinstance(fragments, list):
                for fragment in fragments:
                    self.assembler.add(fragment)
            elif isinstance(legacy, dict):
                self.assembler.add({"function": legacy})
        except MalformedFragment as exc:
            raise LegFormatError(str(exc)) from exc
        return self.content.read(delta)

    def final(self) -> StreamEvent:
        if self.assembler.has_calls:
            return ToolCalls(self.assembler.calls(), self.usage)
        return Done(self.usage, self.finish_reason)

    def on_end(self) -> StreamEvent | None:
        if self.chunks == 0:
            return None
        if self.finish_reason is None and self.assembler.incomplete():
            return None  # cut in the middle of a call's arguments
        return self.final()

    def held_back(self) -> list[StreamEvent]:
        """Text held back at the end of the body (a tail that looked like a tag)."""
        return self.content.flush()

    def on_json_body(self, payload: Any) -> list[StreamEvent]:
        """A server that ignored `stream: true` and sent one chat.completion."""
        if not isinstance(payload, dict):
            raise LegFormatError("the server answered with JSON that is not an object")
        if payload.get("error"):
            return [stream_error_from(payload)]
        choices = payload.get("choices")
        if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
            raise LegFormatError("the server answered with JSON that holds no choices")
        message = choices[0].get("message") or {}
        fragments = message.get("tool_calls") if isinstance(message, dict) else None
        delta = {
            **{
                name: message.get(name)
                for name in REASONING_FIELDS
                if isinstance(message, dict) and name in message
            },
            "content": message.get("content") if isinstance(message, dict) else None,
            "tool_calls": [
                {**fragment, "index": number} if isinstance(fragment, dict) else fragment
                for number, fragment in enumerate(fragments)
            ]
            if isinstance(fragments, list)
            else None,
        }
        self.chunks += 1
        events = self.on_chunk(
            {
                "usage": payload.get("usage"),
                "choices": [{"delta": delta, "finish_reason": choices[0].get("finish_reason")}],
            }
        )
        return [*events, *self.content.flush(), self.final()]


def refused_usage_option(event: StreamEvent) -> bool:
    """A 400/422 that names `stream_options`: the server does not take the usage request."""
    if not isinstance(event, StreamError) or event.status not in (400, 422):
        return False
    text = event.message.lower()
    return "stream_options" in text or "include_usage" in text


# json.loads without its Python layers (the decoder's configuration is json.loads's own).
_scan: Callable[[str, int], tuple[Any, int]] = json.scanner.make_scanner(
    json.JSONDecoder()  # type: ignore[arg-type]
)


def _chunk_json(event: SSEEvent) -> dict[str, Any] | None:
    """The event's JSON when it is an object without an error, exactly all of its data,
    read the short way: None leaves the event to the ordinary reading and its errors."""
    data = event.data
    if event.event or data[:1] != "{" or bounded_json.needs_a_closer_look(data):
        return None
    try:
        payload, end = _scan(data, 0)
    except (ValueError, StopIteration, RecursionError):
        return None
    if end != len(data) or not isinstance(payload, dict) or payload.get("error"):
        return None
    return payload


def _loads(data: str) -> Any:
    try:
        return bounded_json.loads(data)
    except bounded_json.JSONTooDeep as exc:
        raise LegFormatError(f"the server sent a chunk of {exc}") from None
    except ValueError:
        raise LegFormatError(
            f"the server sent malformed JSON in the stream: {one_line(data, 80)!r}"
        ) from None


def stream_error_from(payload: Any) -> StreamError:
    """An `error` object (or `{"error": {...}}`) sent inside a stream."""
    error = payload.get("error", payload) if isinstance(payload, dict) else payload
    if isinstance(error, str):
        return StreamError(one_line(error))
    if not isinstance(error, dict):
        return StreamError("the server reported an error without a message")
    message = error.get("message") or error.get("detail") or "the server reported an error"
    code = error.get("code")
    kind = error.get("type")
    status = code if isinstance(code, int) else error.get("status")
    status = status if isinstance(status, int) else None
    words = f"{code} {kind}".lower()
    retryable = bool(error.get("retryable")) or (
        is_retryable_status(status) if status else any(w in words for w in _RETRYABLE_WORDS)
    )
    suffix = f" ({code})" if isinstance(code, str) and code else ""
    return StreamError(one_line(str(message)) + suffix, status=status, retryable=retryable)


class OpenAITransport(HttpEndpoint):
    """POST {base_url}/chat/completions, streamed. Never retries (the loop does)."""

    name = "openai"

    def __init__(
        self,
        base_url: str,
        api_key: str | None,
        *,
        instructions: bool = True,
        send_reasoning: bool = False,
        **options: Unpack[EndpointOptions],
    ) -> None:
        """`instructions`: lead each leg with melgui's system message (core.instructions)
        when the conversation has none, since such a server knows nothing of the project.
        `send_reasoning`: keep earlier reasoning in the history sent (reasoning_back)."""
        super().__init__(base_url, api_key, **options)
        self.send_reasoning = send_reasoning
        self.instructions = instructions
        self.ask_usage = True  # False once the server refused stream_options

    def request_body(self, request: LegRequest) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": request.model,
            "messages": wire_messages(
                with_instructions(request.messages, request.tool_role, request.cwd)
                if self.instructions
                else request.messages,
                self.send_reasoning,
            ),
            "stream": True,
        }
        if self.ask_usage:
            body["stream_options"] = {"include_usage": True}
        if request.tools:
            body["tools"] = [tool.to_openai() for tool in request.tools]
            body["tool_choice"] = request.tool_choice
        return body

    def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        return self._stream(request, wire)

    def _events(self, request: LegRequest, wire: WireSink | None) -> AsyncIterator[StreamEvent]:
        url = f"{self.base_url}/chat/completions"
        return self._leg(url, self.request_body(request), OpenAILegParser(), wire)

    async def _stream(
        self, request: LegRequest, wire: WireSink | None
    ) -> AsyncIterator[StreamEvent]:
        asked = self.ask_usage
        async with aclosing(cast(LegEvents, self._events(request, wire))) as events:
            async for event in events:
                if asked and refused_usage_option(event):
                    break  # a server that rejects stream_options: send the leg again without
                yield event
            else:
                return
        self.ask_usage = False
        async with aclosing(cast(LegEvents, self._events(request, wire))) as events:
            async for event in events:
                yield event

    async def list_models(self) -> list[ModelInfo]:
        return await self._models(f"{self.base_url}/models", "listing the models")
