"""Stream events: what a transport yields for one leg (docs/wire-protocol.md §1).

A leg ends with exactly one of ToolCalls, Done or StreamError.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, model_validator

from melgui.core.protocol import bounded_json


class Usage(BaseModel):
    """Token counts as a server reports them; unknown fields are kept."""

    model_config = ConfigDict(extra="allow", frozen=True)

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    cached_tokens: int = 0  # of prompt_tokens, read from the server's cache
    cost: float | None = None  # in the server's currency (OpenRouter: credits), if it says

    @model_validator(mode="before")
    @classmethod
    def _fill_total(cls, data: Any) -> Any:
        if isinstance(data, dict) and not data.get("total_tokens"):
            data = {
                **data,
                "total_tokens": int(data.get("prompt_tokens") or 0)
                + int(data.get("completion_tokens") or 0),
            }
        return data

    def __add__(self, other: Usage) -> Usage:
        cost = None
        if self.cost is not None or other.cost is not None:
            cost = (self.cost or 0.0) + (other.cost or 0.0)
        return Usage(
            prompt_tokens=self.prompt_tokens + other.prompt_tokens,
            completion_tokens=self.completion_tokens + other.completion_tokens,
            total_tokens=self.total_tokens + other.total_tokens,
            cached_tokens=self.cached_tokens + other.cached_tokens,
            cost=cost,
        )

    def to_json(self) -> dict[str, Any]:
        """The counts, with cached tokens and cost only when the server reported them."""
        data: dict[str, Any] = {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
        }
        if self.cached_tokens:
            data["cached_tokens"] = self.cached_tokens
        if self.cost is not None:
            data["cost"] = self.cost
        return data

    @classmethod
    def from_wire(cls, data: object) -> Usage | None:
        """Parse a server's usage object; anything unusable gives None."""
        if not isinstance(data, dict):
            return None
        counts = {
            key: data[key]
            for key in ("prompt_tokens", "completion_tokens", "total_tokens")
            if isinstance(data.get(key), int)
        }
        if "input_tokens" in data and "prompt_tokens" not in counts:
            counts["prompt_tokens"] = int(data["input_tokens"])
        if "output_tokens" in data and "completion_tokens" not in counts:
            counts["completion_tokens"] = int(data["output_tokens"])
        if "total_tokens" not in counts:
            counts["total_tokens"] = counts.get("prompt_tokens", 0) + counts.get(
                "completion_tokens", 0
            )
        details = data.get("prompt_tokens_details")
        cached = details.get("cached_tokens") if isinstance(details, dict) else None
        cached = cached if isinstance(cached, int) else data.get("cache_read_input_tokens")
        if isinstance(cached, int) and not isinstance(cached, bool):
            counts["cached_tokens"] = cached
        cost = data.get("cost")
        extra: dict[str, Any] = {}
        if isinstance(cost, int | float) and not isinstance(cost, bool):
            extra["cost"] = float(cost)
        return cls(**counts, **extra)


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One call the model asked for; `arguments` is the JSON string as received (docs/tools.md)."""

    id: str
    name: str
    arguments: str
    _decoded: tuple[dict[str, Any] | None, str | None] | None = field(
        default=None, init=False, repr=False, compare=False
    )

    def decode(self) -> tuple[dict[str, Any] | None, str | None]:
        """The arguments as an object, or (None, why not) in words for the model.

        Decoded once and kept: the loop, the chat, the inspector and the store all ask.
        """
        if self._decoded is None:
            object.__setattr__(self, "_decoded", _decode_arguments(self.name, self.arguments))
        assert self._decoded is not None
        return self._decoded

    @property
    def parsed(self) -> dict[str, Any] | None:
        """The arguments as an object, or None when they are not one."""
        return self.decode()[0]

    def to_wire(self) -> dict[str, object]:
        """The OpenAI/relay chat shape used inside an assistant message."""
        return {
            "id": self.id,
            "type": "function",
            "function": {"name": self.name, "arguments": self.arguments},
        }


def _decode_arguments(name: str, raw: str) -> tuple[dict[str, Any] | None, str | None]:
    text = raw.strip()
    if not text:
        return {}, None
    try:
        value = bounded_json.loads(text)
    except bounded_json.JSONTooDeep as exc:
        return None, f"The arguments of {name} are {exc}. Send the call again, less nested."
    except json.JSONDecodeError as exc:
        return None, (
            f"The arguments of {name} are not valid JSON ({exc.msg} at position {exc.pos}). "
            "Send the call again with a JSON object."
        )
    if not isinstance(value, dict):
        return None, f"The arguments of {name} must be a JSON object, not {type(value).__name__}."
    return value, None


@dataclass(frozen=True, slots=True)
class TextDelta:
    text: str
    kind: Literal["text"] = "text"


@dataclass(frozen=True, slots=True)
class ReasoningDelta:
    """A piece of the model's reasoning ("thinking"), kept apart from the answer."""

    text: str
    kind: Literal["reasoning"] = "reasoning"


@dataclass(frozen=True, slots=True)
class ToolCalls:
    calls: tuple[ToolCall, ...]
    usage: Usage | None = None
    kind: Literal["tool_calls"] = "tool_calls"


@dataclass(frozen=True, slots=True)
class Done:
    usage: Usage | None = None
    finish_reason: str | None = None
    kind: Literal["done"] = "done"


@dataclass(frozen=True, slots=True)
class StreamError:
    """The leg failed. `status` is the HTTP status when there was one.

    `retryable` says whether the same leg may be sent again; `retry_after` is the
    server's requested wait in seconds, when it gave one. `events_seen` is True when
    the failure came after at least one event of the leg had arrived.
    """

    message: str
    status: int | None = None
    retryable: bool = False
    retry_after: float | None = None
    events_seen: bool = False
    kind: Literal["error"] = "error"


StreamEvent = TextDelta | ReasoningDelta | ToolCalls | Done | StreamError

# What a StreamError's message says, read by the transports that write it and by the
# window that explains it: the stream closed before the leg finished...
ENDED_EARLY = "the stream ended before the leg finished"
# ...or the server refused the messages it was sent (its validation of the request's
# content, not a failure): sending the same history again cannot help.
_REJECTION_WORDS = (
    "validation error",
    "input should be",
    "field required",
    "unprocessable",
    "tool_call_id",
    "messages[",
    "messages.",
    "invalid 'messages",
    "pydantic",
)


def rejects_history(message: str) -> bool:
    """True when an error text reads as the server refusing the messages it was sent."""
    lower = message.lower()
    return any(word in lower for word in _REJECTION_WORDS)


@dataclass(frozen=True, slots=True)
class WireEntry:
    """One line of the raw wire log of a leg (request, SSE event, HTTP status)."""

    direction: Literal["request", "response", "event", "note"]
    text: str
    at: float = field(default=0.0)
    redacted: bool = False  # the transport took its key and key-like text out already
