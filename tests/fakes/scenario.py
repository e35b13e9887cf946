"""The steps a scripted server plays, and how each flavour puts them on the wire.

A leg is a list of steps, or a function of the RecordedRequest that returns one. The
same leg plays on both flavours: `text` is a relay `delta` event or an OpenAI
`delta.content` chunk, `tool_calls` a relay `tool_calls` event or streamed fragments
followed by `finish_reason`, usage and `[DONE]`.
"""

from __future__ import annotations

import itertools
import json
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from tests.fakes.scripted_server import RecordedRequest

_ids = itertools.count(1)


class _Auto:
    def __repr__(self) -> str:
        return "AUTO"


AUTO: Any = _Auto()


@dataclass(frozen=True)
class Call:
    """One tool call to send; `id=None` sends it without an id."""

    name: str
    arguments: str
    id: str | None


def tool_call(name: str, arguments: dict[str, Any] | str | None = None, id: Any = AUTO) -> Call:
    """A call; dict arguments are JSON-encoded, a str is sent verbatim (even broken JSON)."""
    if arguments is None:
        arguments = {}
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return Call(name, text, f"call_{next(_ids)}" if id is AUTO else id)


# --- steps -----------------------------------------------------------------------------


@dataclass(frozen=True)
class Text:
    text: str


OpenAIStyle = Literal["split", "whole", "one_chunk", "no_index", "same_index"]


@dataclass(frozen=True)
class ToolCallsStep:
    calls: tuple[Call, ...]
    usage: dict[str, int] | None = None
    style: OpenAIStyle = "split"
    piece: int = 7
    finish_reason: str | None = "tool_calls"
    end_marker: bool = True


@dataclass(frozen=True)
class DoneStep:
    usage: dict[str, int] | None = None
    finish_reason: str | None = "stop"
    end_marker: bool = True


@dataclass(frozen=True)
class ErrorEvent:
    message: str
    code: str | None = None
    retryable: bool | None = None


@dataclass(frozen=True)
class HttpReply:
    """A whole non-streaming reply; must be the leg's only step (or come first)."""

    status: int
    body: Any = None
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Drop:
    """Close the connection now (before the headers when it is the first step)."""


@dataclass(frozen=True)
class Pause:
    seconds: float


@dataclass(frozen=True)
class Hold:
    """Wait until the test sets `gate` (or `timeout` passes): lets a test act mid-stream."""

    gate: threading.Event
    timeout: float = 30.0


@dataclass(frozen=True)
class Raw:
    data: bytes


@dataclass(frozen=True)
class Comment:
    text: str


@dataclass(frozen=True)
class SSE:
    """A generic SSE event: `data` is JSON-encoded unless it is a str."""

    data: Any
    event: str | None = None


@dataclass(frozen=True)
class Pieces:
    """From here on, write the body in pieces of `size` bytes, `delay` seconds apart."""

    size: int | None
    delay: float = 0.0


@dataclass(frozen=True)
class Framing:
    """From here on, end SSE lines with `newline` ("\\n", "\\r\\n" or "\\r")."""

    newline: str


Step = (
    Text
    | ToolCallsStep
    | DoneStep
    | ErrorEvent
    | HttpReply
    | Drop
    | Pause
    | Hold
    | Raw
    | Comment
    | SSE
    | Pieces
    | Framing
)
STEP_TYPES = (
    Text,
    ToolCallsStep,
    DoneStep,
    ErrorEvent,
    HttpReply,
    Drop,
    Pause,
    Hold,
    Raw,
    Comment,
    SSE,
    Pieces,
    Framing,
)
Leg = Sequence[Step] | Callable[["RecordedRequest"], Sequence[Step]]


def text(value: str) -> Text:
    return Text(value)


def tool_calls(
    *calls: Call,
    usage: dict[str, int] | None = None,
    style: OpenAIStyle = "split",
    piece: int = 7,
    finish_reason: str | None = "tool_calls",
    end_marker: bool = True,
) -> ToolCallsStep:
    """Ends the leg with calls. The keyword arguments shape the OpenAI flavour only:
    `style` how fragments are sent, `piece` argument characters per fragment,
    `finish_reason` (None: none sent), `end_marker` whether `[DONE]` follows."""
    return ToolCallsStep(tuple(calls), usage, style, piece, finish_reason, end_marker)


def done(
    usage: dict[str, int] | None = None,
    finish_reason: str | None = "stop",
    end_marker: bool = True,
) -> DoneStep:
    return DoneStep(usage, finish_reason, end_marker)


def error_event(message: str, code: str | None = None, retryable: bool | None = None) -> ErrorEvent:
    return ErrorEvent(message, code, retryable)


def http_error(status: int, body: Any = None, headers: dict[str, str] | None = None) -> HttpReply:
    """A plain reply: a dict/list body is JSON, a str is text. `{"error": {"message": …}}`
    is the usual error shape."""
    return HttpReply(status, body, dict(headers or {}))


def drop() -> Drop:
    return Drop()


def pause(seconds: float) -> Pause:
    return Pause(seconds)


def hold(gate: threading.Event, timeout: float = 30.0) -> Hold:
    return Hold(gate, timeout)


def raw(data: bytes | str) -> Raw:
    return Raw(data.encode() if isinstance(data, str) else data)


def comment(value: str = "keep-alive") -> Comment:
    return Comment(value)


def sse(data: Any, event: str | None = None) -> SSE:
    return SSE(data, event)


def delta(**fields: Any) -> SSE:
    """One OpenAI chat.completion.chunk carrying `fields` as its delta (reasoning forms,
    content arrays): for ScriptedOpenAI only."""
    choice = {"index": 0, "delta": fields, "finish_reason": None}
    return SSE({"object": "chat.completion.chunk", "choices": [choice]})


def pieces(size: int | None, delay: float = 0.0) -> Pieces:
    return Pieces(size, delay)


def framing(newline: str) -> Framing:
    return Framing(newline)


# --- encoders --------------------------------------------------------------------------


def sse_bytes(data: Any, event: str | None = None, newline: str = "\n") -> bytes:
    payload = data if isinstance(data, str) else json.dumps(data, ensure_ascii=False)
    lines = [f"event: {event}"] if event else []
    lines += [f"data: {line}" for line in payload.split("\n")]
    return (newline.join(lines) + newline + newline).encode()


def encode_relay(step: Step, newline: str) -> bytes:
    """A body step as the Mel relay sends it."""
    if isinstance(step, Text):
        return sse_bytes({"text": step.text}, "delta", newline)
    if isinstance(step, ToolCallsStep):
        calls = []
        for call in step.calls:
            item: dict[str, Any] = {"name": call.name, "arguments": call.arguments}
            if call.id is not None:
                item = {"id": call.id, **item}
            calls.append(item)
        payload: dict[str, Any] = {"calls": calls}
        if step.usage is not None:
            payload["usage"] = step.usage
        return sse_bytes(payload, "tool_calls", newline)
    if isinstance(step, DoneStep):
        done_payload: dict[str, Any] = {}
        if step.usage is not None:
            done_payload["usage"] = step.usage
        if step.finish_reason is not None:
            done_payload["finish_reason"] = step.finish_reason
        return sse_bytes(done_payload, "done", newline)
    if isinstance(step, ErrorEvent):
        error: dict[str, Any] = {"message": step.message}
        if step.code is not None:
            error["code"] = step.code
        if step.retryable is not None:
            error["retryable"] = step.retryable
        return sse_bytes(error, "error", newline)
    return _encode_common(step, newline)


def _encode_common(step: Step, newline: str) -> bytes:
    if isinstance(step, Raw):
        return step.data
    if isinstance(step, Comment):
        return f":{step.text}{newline}{newline}".encode()
    if isinstance(step, SSE):
        return sse_bytes(step.data, step.event, newline)
    raise TypeError(f"not a body step: {step!r}")


class OpenAIEncoder:
    """Steps as chat.completion.chunk events; one encoder per leg."""

    def __init__(self, model: str, leg_number: int) -> None:
        self.model = model
        self.id = f"chatcmpl-{leg_number}"
        self.started = False

    def chunk(
        self, delta: dict[str, Any] | None = None, finish_reason: str | None = None
    ) -> dict[str, Any]:
        if delta is not None and not self.started:
            delta = {"role": "assistant", **delta}
            self.started = True
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta or {}, "finish_reason": finish_reason}],
        }

    def usage_chunk(self, usage: dict[str, int]) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": 1700000000,
            "model": self.model,
            "choices": [],
            "usage": usage,
        }

    def encode(self, step: Step, newline: str) -> bytes:
        if isinstance(step, Text):
            return sse_bytes(self.chunk({"content": step.text}), None, newline)
        if isinstance(step, ToolCallsStep):
            chunks = self._call_chunks(step)
            return b"".join(sse_bytes(c, None, newline) for c in chunks) + self._ending(
                step.finish_reason, step.usage, step.end_marker, newline
            )
        if isinstance(step, DoneStep):
            return self._ending(step.finish_reason, step.usage, step.end_marker, newline)
        if isinstance(step, ErrorEvent):
            error: dict[str, Any] = {"message": step.message, "type": "server_error"}
            if step.code is not None:
                error["code"] = step.code
            return sse_bytes({"error": error}, None, newline)
        return _encode_common(step, newline)

    def _ending(
        self, reason: str | None, usage: dict[str, int] | None, marker: bool, newline: str
    ) -> bytes:
        out = b""
        if reason is not None:
            out += sse_bytes(self.chunk({}, reason), None, newline)
        if usage is not None:
            out += sse_bytes(self.usage_chunk(usage), None, newline)
        if marker:
            out += sse_bytes("[DONE]", None, newline)
        return out

    def _call_chunks(self, step: ToolCallsStep) -> list[dict[str, Any]]:
        def fragment(number: int, call: Call, args: str, head: bool) -> dict[str, Any]:
            item: dict[str, Any] = {}
            if step.style != "no_index":
                item["index"] = 0 if step.style == "same_index" else number
            if head:
                if call.id is not None:
                    item["id"] = call.id
                item["type"] = "function"
                item["function"] = {"name": call.name, "arguments": args}
            else:
                item["function"] = {"arguments": args}
            return item

        if step.style == "one_chunk":
            whole = [fragment(n, call, call.arguments, True) for n, call in enumerate(step.calls)]
            return [self.chunk({"tool_calls": whole})]
        chunks = []
        for number, call in enumerate(step.calls):
            if step.style == "whole":
                chunks.append(
                    self.chunk({"tool_calls": [fragment(number, call, call.arguments, True)]})
                )
                continue
            chunks.append(self.chunk({"tool_calls": [fragment(number, call, "", True)]}))
            args = call.arguments
            for start in range(0, len(args), max(1, step.piece)):
                piece = args[start : start + max(1, step.piece)]
                chunks.append(self.chunk({"tool_calls": [fragment(number, call, piece, False)]}))
        return chunks
