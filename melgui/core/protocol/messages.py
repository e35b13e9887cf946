"""Conversation messages in the chat shape of docs/tools.md, with pairing checks.

A tool message also keeps, for melgui only, the `status` of its call (ok, denied,
error, cancelled, interrupted); it never goes on the wire. An assistant message keeps
the model's `reasoning` apart from its text; on the wire it is `reasoning_content`,
which the transports drop unless the connection is set to send reasoning back.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, replace
from typing import Any, Literal, get_args

from melgui.core.protocol.call_life import RESULT_STATUSES, ResultStatus
from melgui.core.protocol.content import FilePart, ImagePart, Part, part_from_json, wire_content
from melgui.core.protocol.events import ToolCall

MessageRole = Literal["system", "user", "assistant", "tool"]
MESSAGE_ROLES = frozenset(get_args(MessageRole))
REASONING_WIRE_KEY = "reasoning_content"


@dataclass(frozen=True, slots=True)
class Message:
    role: MessageRole
    content: str = ""
    tool_calls: tuple[ToolCall, ...] = ()
    tool_call_id: str | None = None
    status: ResultStatus | None = None
    reasoning: str = ""
    parts: tuple[Part, ...] = ()

    @classmethod
    def system(cls, text: str) -> Message:
        return cls("system", text)

    @classmethod
    def user(cls, text: str, parts: tuple[Part, ...] = ()) -> Message:
        return cls("user", text, parts=parts)

    @classmethod
    def assistant(cls, text: str, calls: tuple[ToolCall, ...] = (), reasoning: str = "") -> Message:
        return cls("assistant", text, tool_calls=calls, reasoning=reasoning)

    @classmethod
    def tool_result(cls, call_id: str, content: str, status: ResultStatus = "ok") -> Message:
        return cls("tool", content, tool_call_id=call_id, status=status)

    def to_wire(self) -> dict[str, Any]:
        """The message as both transports send it."""
        wire: dict[str, Any] = {"role": self.role}
        if self.role == "assistant" and self.tool_calls:
            # Servers accept null or text beside tool_calls; empty text is sent as null.
            wire["content"] = self.content or None
            wire["tool_calls"] = [call.to_wire() for call in self.tool_calls]
        else:
            wire["content"] = wire_content(self.content, self.parts)
        if self.role == "assistant" and self.reasoning:
            wire[REASONING_WIRE_KEY] = self.reasoning
        if self.role == "tool":
            wire["tool_call_id"] = self.tool_call_id
        return wire

    def to_json(self) -> dict[str, Any]:
        """Complete form for storage and export (the wire form plus `status`)."""
        data = self.to_wire()
        if self.role == "assistant":
            data["content"] = self.content
            data["tool_calls"] = [call.to_wire() for call in self.tool_calls]
            if self.reasoning:
                data["reasoning"] = data.pop(REASONING_WIRE_KEY)
        if self.parts:
            data["content"] = self.content
            data["parts"] = [part.to_json() for part in self.parts]
        if self.status is not None:
            data["status"] = self.status
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Message:
        """Inverse of to_json / to_wire; raises ValueError on a malformed message."""
        get = data.get
        return cls.from_fields(
            get("role"),
            get("content"),
            get("tool_calls"),
            get("tool_call_id"),
            get("status"),
            get("reasoning", get(REASONING_WIRE_KEY)),
            get("parts"),
        )

    @classmethod
    def from_fields(
        cls,
        role: Any,
        content: Any,
        tool_calls: Any = None,
        tool_call_id: Any = None,
        status: Any = None,
        reasoning: Any = None,
        parts: Any = None,
    ) -> Message:
        """`from_json` given its fields one by one, as a stored row's columns hold them:
        reopening a long conversation reads each message without a dict made for it."""
        if role not in MESSAGE_ROLES:
            raise ValueError(f"message has unknown role {role!r}")
        text = content or ""
        read_parts = tuple(part_from_json(part) for part in parts) if parts else ()
        if not isinstance(text, str):
            text = json.dumps(text)
        calls = tuple(_call_from_json(raw) for raw in tool_calls) if tool_calls else ()
        if status is not None and status not in RESULT_STATUSES:
            raise ValueError(f"tool message has unknown status {status!r}")
        return cls(
            role,
            text,
            calls,
            str(tool_call_id) if tool_call_id is not None else None,
            status,
            reasoning if reasoning and isinstance(reasoning, str) else "",
            read_parts,
        )


def _call_from_json(raw: dict[str, Any]) -> ToolCall:
    """One entry of a stored or sent message's `tool_calls`, in the wire's shape."""
    function = raw.get("function") or {}
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return ToolCall(str(raw.get("id", "")), str(function.get("name", "")), arguments)


@dataclass(frozen=True, slots=True)
class Repair:
    """What `repair_pairing` changed so that every call has exactly one result."""

    added_results: tuple[str, ...] = ()
    dropped_results: tuple[str, ...] = ()

    def __bool__(self) -> bool:
        return bool(self.added_results or self.dropped_results)

    def describe(self) -> str:
        parts = []
        if self.added_results:
            parts.append(f"added an 'interrupted' result for {len(self.added_results)} call(s)")
        if self.dropped_results:
            parts.append(f"dropped {len(self.dropped_results)} result(s) without a call")
        return "History repaired: " + "; ".join(parts) + "."


INTERRUPTED_RESULT = (
    "The call was interrupted before it produced a result (the app stopped or the "
    "turn was cancelled). It may or may not have taken effect; check before retrying."
)


@dataclass(slots=True)
class Conversation:
    """An ordered list of messages whose tool calls are each answered exactly once."""

    messages: list[Message] = field(default_factory=list)

    def append(self, message: Message) -> None:
        self.messages.append(message)

    def to_wire(self) -> list[dict[str, Any]]:
        return [message.to_wire() for message in self.messages]

    def pending_call_ids(self) -> list[str]:
        """Ids of calls of the last assistant message that have no result yet."""
        for index in range(len(self.messages) - 1, -1, -1):
            message = self.messages[index]
            if message.role == "assistant" and message.tool_calls:
                answered = {m.tool_call_id for m in self.messages[index + 1 :] if m.role == "tool"}
                return [c.id for c in message.tool_calls if c.id not in answered]
            if message.role == "assistant":
                return []
        return []

    def repair_pairing(self) -> Repair:
        """Make the history valid for any server; returns what changed.

        Each assistant message's calls are followed directly by one result per call,
        in the calls' order. Missing results become 'interrupted'; results that answer
        no call (or answer a call twice) are dropped.
        """
        repaired: list[Message] = []
        added: list[str] = []
        dropped: list[str] = []
        index = 0
        messages = self.messages
        while index < len(messages):
            message = messages[index]
            index += 1
            if message.role == "tool":
                dropped.append(message.tool_call_id or "")
                continue
            repaired.append(message)
            if message.role != "assistant" or not message.tool_calls:
                continue
            results: dict[str, Message] = {}
            trailing: list[Message] = []
            wanted = {call.id for call in message.tool_calls}
            # Results belong to this call group until the next non-tool message.
            while index < len(messages) and messages[index].role == "tool":
                result = messages[index]
                index += 1
                if result.tool_call_id in wanted and result.tool_call_id not in results:
                    results[result.tool_call_id] = result
                else:
                    dropped.append(result.tool_call_id or "")
            for call in message.tool_calls:
                if call.id in results:
                    trailing.append(results[call.id])
                else:
                    added.append(call.id)
                    trailing.append(Message.tool_result(call.id, INTERRUPTED_RESULT, "interrupted"))
            repaired.extend(trailing)
        repair = Repair(tuple(added), tuple(dropped))
        if repair or repaired != messages:
            self.messages[:] = repaired
        return repair


def without_images(messages: list[Message]) -> list[Message]:
    """The messages with each image replaced by a line saying it was not sent."""
    out = []
    for message in messages:
        if any(isinstance(part, ImagePart) for part in message.parts):
            parts = tuple(
                FilePart(part.name or "image", "(an image the model could not take)")
                if isinstance(part, ImagePart)
                else part
                for part in message.parts
            )
            message = replace(message, parts=parts)
        out.append(message)
    return out
