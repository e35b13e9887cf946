"""How a message of the conversation is named in a line: the person's words, the model's,
a tool result by its file or command."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from melgui.core.protocol.calls import shorten, summarize
from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Message
from melgui.core.protocol.views.compacted import is_summary, is_summary_ack, persons_words

LIMIT = 70


def calls_by_id(messages: Sequence[Message]) -> dict[str, ToolCall]:
    return {call.id: call for m in messages if m.role == "assistant" for call in m.tool_calls}


def call_label(call: ToolCall, tools: Mapping[str, ToolDef], limit: int = LIMIT) -> str:
    """`read_file src/app.py`, `run_command pytest -q`, an MCP tool with its server."""
    tool = tools.get(call.name)
    what = summarize(call.name, call.parsed, limit, tool=tool)
    name = call.name
    if tool is not None and tool.origin.startswith("mcp:"):
        name = f"{tool.origin[4:]}: {name}"
    return f"{name} {what}".strip()


def message_label(
    message: Message, calls: Mapping[str, ToolCall], tools: Mapping[str, ToolDef]
) -> str:
    """One line naming `message` as a person would recognise it."""
    if is_summary(message):
        return "Summary of the earlier conversation (compaction)"
    if is_summary_ack(message):
        return "Model: continues from the summary"
    match message.role:
        case "system":
            return "System message"
        case "user":
            return "You: " + shorten(persons_words(message.content), LIMIT)
        case "tool":
            call = calls.get(message.tool_call_id or "")
            if call is None:
                return "Result of a call no longer in view"
            return "Result: " + call_label(call, tools)
        case _:
            if message.content.strip():
                return "Model: " + shorten(message.content, LIMIT)
            names = ", ".join(call_label(c, tools, 30) for c in message.tool_calls)
            return "Model calls " + names if names else "Model (no text)"
