"""What the next request's tokens are spent on: the system message and instructions, each
tool's definition (an MCP server's schemas too), each earlier message, each tool result
by its file or command, each attached file and image.

Each slice is counted as the context estimate counts it (characters over the ratio
calibrated on the server's own counts; images by their tiles), so the slices add up to
the meter's number. No tokenizer counts them here: `exact` stays False and the view says
"estimate"; a transport that can count (`Count`) makes them exact.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

from melgui.core.agent.context import MESSAGE_OVERHEAD, image_tokens, message_chars, part_chars
from melgui.core.agent.session import AgentSession
from melgui.core.context.labels import calls_by_id, message_label
from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.content import FilePart, ImagePart
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Message

Kind = Literal["system", "tool", "message", "result", "file", "image"]
KINDS: tuple[Kind, ...] = ("system", "tool", "message", "result", "file", "image")
KIND_LABEL: dict[Kind, str] = {
    "system": "System and instructions",
    "tool": "Tool definitions",
    "message": "Messages",
    "result": "Tool results",
    "file": "Attached files",
    "image": "Images",
}
Count = Callable[[str], int]  # a tokenizer's count of a text


@dataclass(frozen=True, slots=True)
class Slice:
    kind: Kind
    label: str
    tokens: int
    message: int | None = None  # its message's index in the conversation (a click goes there)
    call_id: str = ""  # a tool result's call (the chat shows its card)


@dataclass(frozen=True)
class Breakdown:
    slices: tuple[Slice, ...]  # largest first
    total: int
    exact: bool = False  # counted by a tokenizer; else estimated
    calibrated: bool = False  # the ratio came from the server's own counts

    def by_kind(self) -> dict[Kind, int]:
        totals: dict[Kind, int] = dict.fromkeys(KINDS, 0)
        for piece in self.slices:
            totals[piece.kind] += piece.tokens
        return totals


def breakdown(
    messages: Sequence[Message],
    tools: Sequence[ToolDef],
    system: str,
    chars_per_token: float,
    *,
    calibrated: bool = False,
    count: Count | None = None,
) -> Breakdown:
    """The next request, slice by slice, largest first. `system` is the text the
    transport adds as the system message ("" when the conversation starts with its own)."""

    def tokens(chars: int, text: str | None = None) -> int:
        if count is not None and text is not None:
            return count(text)
        return round(chars / chars_per_token)

    out: list[Slice] = []
    if system:
        out.append(Slice("system", "System message and instructions", tokens(len(system), system)))
    by_name = {tool.name: tool for tool in tools}
    for tool in tools:
        schema = json.dumps(tool.to_openai())
        where = f" ({tool.origin[4:]}, MCP)" if tool.origin.startswith("mcp:") else ""
        out.append(Slice("tool", f"Tool: {tool.name}{where}", tokens(len(schema), schema)))
    calls = calls_by_id(messages)
    for index, message in enumerate(messages):
        out.extend(_message_slices(index, message, calls, by_name, tokens))
    out.sort(key=lambda s: s.tokens, reverse=True)
    return Breakdown(tuple(out), sum(s.tokens for s in out), count is not None, calibrated)


def _message_slices(
    index: int,
    message: Message,
    calls: Mapping[str, ToolCall],
    tools: dict[str, ToolDef],
    tokens: Callable[[int, str | None], int],
) -> list[Slice]:
    label = message_label(message, calls, tools)
    own = message_chars(message) - sum(part_chars(p) for p in message.parts)
    kind: Kind = "system" if message.role == "system" else "message"
    if message.role == "tool":
        kind = "result"
    text = message.content + "".join(c.arguments for c in message.tool_calls)
    call_id = message.tool_call_id or ""
    out = [Slice(kind, label, tokens(own, text), index, call_id)]
    for part in message.parts:
        if isinstance(part, ImagePart):
            name = part.name or "pasted image"
            size = part.dimensions
            shown = f"{name} ({size[0]}×{size[1]})" if size else name
            out.append(Slice("image", f"Image: {shown}", image_tokens(part), index))
        elif isinstance(part, FilePart):
            wire = part.wire_text()
            chars = MESSAGE_OVERHEAD + len(wire)
            out.append(Slice("file", f"Attached: {part.path}", tokens(chars, wire), index))
    return out


def next_request(session: AgentSession, count: Count | None = None) -> Breakdown:
    """The breakdown of the request `session` would send next, counted as its context
    meter counts it (the compactor's system text and tools, the tracker's ratio)."""
    loop = session.loop
    tracker = session.context
    return breakdown(
        session.conversation.messages,
        loop.catalog.for_role(loop.role),
        session.compactor.system(),
        tracker.chars_per_token,
        calibrated=tracker.calibrated,
        count=count,
    )
