"""The scripted legs as Anthropic's Messages API streams them (POST /v1/messages), for a
client that speaks only that wire (Claude Code): the same `text`, `tool_calls` and
`done` steps as tests/fakes' servers play, as message_start, content blocks (text,
tool_use with its input as one input_json_delta), message_delta with the stop reason,
and message_stop.

    with ScriptedAnthropic() as server:   # ANTHROPIC_BASE_URL=server.url
        server.script([text("Hi"), done()])
"""

from __future__ import annotations

import json
from typing import Any

from tests.fakes.scenario import (
    DoneStep,
    HttpReply,
    Step,
    Text,
    ToolCallsStep,
    _encode_common,
    sse_bytes,
)
from tests.fakes.scripted_server import RecordedRequest, ScriptedServer

MESSAGES_PATH = "/v1/messages"


class AnthropicEncoder:
    """Steps as Messages API stream events; one encoder per leg."""

    def __init__(self, model: str, leg_number: int) -> None:
        self.model = model
        self.id = f"msg_{leg_number}"
        self.started = False
        self.blocks = 0  # content blocks started
        self.text_open = False

    def _event(self, kind: str, newline: str, **fields: Any) -> bytes:
        return sse_bytes({"type": kind, **fields}, kind, newline)

    def _start(self, newline: str) -> bytes:
        if self.started:
            return b""
        self.started = True
        message = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
        return self._event("message_start", newline, message=message)

    def _close_text(self, newline: str) -> bytes:
        if not self.text_open:
            return b""
        self.text_open = False
        return self._event("content_block_stop", newline, index=self.blocks - 1)

    def _end(self, reason: str, newline: str) -> bytes:
        out = self._start(newline) + self._close_text(newline)
        out += self._event(
            "message_delta",
            newline,
            delta={"stop_reason": reason, "stop_sequence": None},
            usage={"output_tokens": 1},
        )
        return out + self._event("message_stop", newline)

    def encode(self, step: Step, newline: str) -> bytes:
        if isinstance(step, Text):
            out = self._start(newline)
            if not self.text_open:
                self.text_open = True
                block = {"type": "text", "text": ""}
                out += self._event(
                    "content_block_start", newline, index=self.blocks, content_block=block
                )
                self.blocks += 1
            delta = {"type": "text_delta", "text": step.text}
            return out + self._event(
                "content_block_delta", newline, index=self.blocks - 1, delta=delta
            )
        if isinstance(step, ToolCallsStep):
            out = self._start(newline) + self._close_text(newline)
            for call in step.calls:
                index = self.blocks
                self.blocks += 1
                block = {"type": "tool_use", "id": call.id, "name": call.name, "input": {}}
                out += self._event("content_block_start", newline, index=index, content_block=block)
                delta = {"type": "input_json_delta", "partial_json": call.arguments}
                out += self._event("content_block_delta", newline, index=index, delta=delta)
                out += self._event("content_block_stop", newline, index=index)
            return out + self._end("tool_use", newline)
        if isinstance(step, DoneStep):
            return self._end("end_turn", newline)
        return _encode_common(step, newline)


class ScriptedAnthropic(ScriptedServer):
    """A Messages API server: each streamed POST /v1/messages plays the next leg; a
    request that does not stream (a client's side question) is answered with one short
    message, outside the script."""

    flavour = "openai"  # the server plays body steps through `encoder_for`
    stream_path = MESSAGES_PATH

    def encoder_for(self, request: RecordedRequest) -> AnthropicEncoder:  # type: ignore[override]
        return AnthropicEncoder(str((request.json or {}).get("model", "")), request.number)

    def is_stream(self, path: str) -> bool:
        return path == MESSAGES_PATH

    def _route(self, request: RecordedRequest) -> HttpReply:
        if request.path == MESSAGES_PATH + "/count_tokens":
            return HttpReply(200, {"input_tokens": len(json.dumps(request.json)) // 4})
        return super()._route(request)


def is_side_question(request: RecordedRequest) -> bool:
    """A Messages request that does not stream: answered outside the script."""
    return isinstance(request.json, dict) and not request.json.get("stream", False)


def side_answer(request: RecordedRequest) -> list[Step]:
    model = str((request.json or {}).get("model", ""))
    message = {
        "id": f"msg_side_{request.number}",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [{"type": "text", "text": "ok"}],
        "stop_reason": "end_turn",
        "stop_sequence": None,
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }
    return [HttpReply(200, message)]
