"""The scripted legs as OpenAI's Responses API streams them (POST /v1/responses), for
clients that speak only that wire (Codex): typed SSE events, text as
`response.output_text.delta`, each finished item as `response.output_item.done`, and
`response.completed` (with usage) to end the response.

    text("Hi ")  ->  response.created (once), response.output_item.added (the message),
                     response.output_text.delta {"delta": "Hi "}
    tool_calls(tool_call("shell", {...}, id="c1"))
                 ->  the message's output_item.done, a function_call output_item.done
                     {"call_id": "c1", "name": "shell", "arguments": "..."},
                     response.completed
    done()       ->  the message's output_item.done, response.completed
    error_event("x") -> response.failed {"response": {"error": {"message": "x"}}}
"""

from __future__ import annotations

from typing import Any

from tests.fakes.scenario import (
    DoneStep,
    ErrorEvent,
    Step,
    Text,
    ToolCallsStep,
    _encode_common,
    sse_bytes,
)


class ResponsesEncoder:
    """Steps as Responses API events; one encoder per leg."""

    def __init__(self, model: str, leg_number: int) -> None:
        self.model = model
        self.id = f"resp_{leg_number}"
        self.message_id = f"msg_{leg_number}"
        self.started = False
        self.text = ""
        self.message_open = False

    def _event(self, kind: str, newline: str, **fields: Any) -> bytes:
        return sse_bytes({"type": kind, **fields}, kind, newline)

    def _response(self, status: str, **fields: Any) -> dict[str, Any]:
        return {
            "id": self.id,
            "object": "response",
            "model": self.model,
            "status": status,
            **fields,
        }

    def _start(self, newline: str) -> bytes:
        if self.started:
            return b""
        self.started = True
        return self._event("response.created", newline, response=self._response("in_progress"))

    def _message(self, content: list[dict[str, Any]], status: str) -> dict[str, Any]:
        return {
            "type": "message",
            "id": self.message_id,
            "role": "assistant",
            "status": status,
            "content": content,
        }

    def _close_message(self, newline: str) -> bytes:
        if not self.message_open:
            return b""
        self.message_open = False
        content = [{"type": "output_text", "text": self.text, "annotations": []}]
        return self._event(
            "response.output_item.done",
            newline,
            output_index=0,
            item=self._message(content, "completed"),
        )

    def _completed(self, usage: dict[str, int] | None, newline: str) -> bytes:
        tokens = usage or {}
        prompt, completion = tokens.get("prompt_tokens", 0), tokens.get("completion_tokens", 0)
        summary = {
            "input_tokens": prompt,
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": completion,
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": tokens.get("total_tokens", prompt + completion),
        }
        completed = self._response("completed", usage=summary)
        return self._event("response.completed", newline, response=completed)

    def encode(self, step: Step, newline: str) -> bytes:
        if isinstance(step, Text):
            out = self._start(newline)
            if not self.message_open:
                self.message_open = True
                item = self._message([], "in_progress")
                out += self._event("response.output_item.added", newline, output_index=0, item=item)
            self.text += step.text
            return out + self._event(
                "response.output_text.delta",
                newline,
                item_id=self.message_id,
                output_index=0,
                content_index=0,
                delta=step.text,
            )
        if isinstance(step, ToolCallsStep):
            out = self._start(newline) + self._close_message(newline)
            for number, call in enumerate(step.calls, start=1):
                item = {
                    "type": "function_call",
                    "id": f"fc_{number}",
                    "call_id": call.id,
                    "name": call.name,
                    "arguments": call.arguments,
                    "status": "completed",
                }
                out += self._event(
                    "response.output_item.done", newline, output_index=number, item=item
                )
            return out + self._completed(step.usage, newline)
        if isinstance(step, DoneStep):
            out = self._start(newline) + self._close_message(newline)
            return out + self._completed(step.usage, newline)
        if isinstance(step, ErrorEvent):
            error = {"message": step.message, "code": step.code or "server_error"}
            failed = self._response("failed", error=error)
            return self._start(newline) + self._event("response.failed", newline, response=failed)
        return _encode_common(step, newline)
