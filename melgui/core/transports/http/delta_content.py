"""Read a chat-completion delta's answer and reasoning, in every form servers use.

Reasoning arrives as `reasoning_content` (DeepSeek, vLLM, Qwen), `reasoning`
(OpenRouter, Groq), `reasoning_text` (Copilot), `thinking` parts inside a content
array (Mistral) or `<think>…</think>` inside the content. A content array is read
part by part: text is kept, thinking goes to reasoning, and a part of a type melgui
does not know is shown as a one-line note instead of vanishing.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from melgui.core.protocol.events import ReasoningDelta, StreamEvent, TextDelta
from melgui.core.transports.http.think_tags import Piece, ThinkTagSplitter

REASONING_FIELDS = ("reasoning_content", "reasoning", "reasoning_text")
_THINKING_TYPES = ("thinking", "reasoning", "reasoning_text")
_NOT_PLAIN = (*REASONING_FIELDS, "tool_calls", "function_call")


class DeltaContent:
    """One leg's worth of deltas → TextDelta / ReasoningDelta events."""

    def __init__(self) -> None:
        self.tags = ThinkTagSplitter()

    def read(self, delta: Mapping[str, Any]) -> list[StreamEvent]:
        events: list[StreamEvent] = []
        for name in REASONING_FIELDS:
            value = delta.get(name)
            if isinstance(value, str) and value:
                # Some servers send the same text under two names: take the first.
                events.append(ReasoningDelta(value))
                break
        content = delta.get("content")
        if isinstance(content, str):
            events.extend(_events(self.tags.feed(content)))
        elif isinstance(content, list):
            for part in content:
                events.extend(self._part(part))
        elif isinstance(content, dict):
            events.extend(self._part(content))
        return _merged(events)

    def plain(self, delta: Mapping[str, Any]) -> str | None:
        """The delta's text when it holds answer text alone (a `content` string and no
        reasoning, no call) and no `<think>` tag can open or be held back any more:
        what `read` would make a TextDelta of, read without its steps. None otherwise."""
        content = delta.get("content")
        if type(content) is not str or not self.tags.settled:
            return None
        for name in _NOT_PLAIN:
            if delta.get(name) is not None:
                return None
        return content

    def flush(self) -> list[StreamEvent]:
        return _events(self.tags.flush())

    def _part(self, part: Any) -> list[StreamEvent]:
        if isinstance(part, str):
            return _events(self.tags.feed(part))
        if not isinstance(part, dict):
            return [TextDelta(f"\n[content part melgui cannot show: {type(part).__name__}]\n")]
        kind = part.get("type")
        if kind == "text" or (kind is None and isinstance(part.get("text"), str)):
            text = part.get("text")
            return _events(self.tags.feed(text)) if isinstance(text, str) else []
        if kind in _THINKING_TYPES:
            text = _thinking_text(part.get(kind, part.get("text")))
            return [ReasoningDelta(text)] if text else []
        return [TextDelta(f"\n[content part melgui cannot show: {kind or 'untyped'}]\n")]


def _thinking_text(value: Any) -> str:
    """`thinking` is text, or a list of text parts (Mistral)."""
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "".join(_thinking_text(item) for item in value)
    if isinstance(value, dict):
        return _thinking_text(value.get("text", value.get("thinking", "")))
    return ""


def _events(pieces: list[Piece]) -> list[StreamEvent]:
    return [
        ReasoningDelta(text) if kind == "reasoning" else TextDelta(text)
        for kind, text in pieces
        if text
    ]


def _merged(events: list[StreamEvent]) -> list[StreamEvent]:
    if len(events) < 2:
        return events
    merged: list[StreamEvent] = []
    for event in events:
        last = merged[-1] if merged else None
        if isinstance(event, TextDelta) and isinstance(last, TextDelta):
            merged[-1] = TextDelta(last.text + event.text)
        elif isinstance(event, ReasoningDelta) and isinstance(last, ReasoningDelta):
            merged[-1] = ReasoningDelta(last.text + event.text)
        else:
            merged.append(event)
    return merged
