"""How a leg is written for a small local model (ChatML, Gemma or Llama 3 turns), and the
grammars that keep its tool calls well formed.

The model sees its tools in the system message and answers in one of two shapes, as
in llama-cpp-python's `chatml-function-calling` format (whose own handler drops tool
results and empties plain answers, so melgui renders the prompt itself):

    message:            functions.read_file:
    <text>              {"path": "notes.txt"}

The first line is chosen under a grammar (`decision_grammar`), the arguments under a
grammar made from the tool's JSON schema; free text is sampled unconstrained.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from typing import Any

from melgui.core.protocol.catalog import ToolDef
from melgui.core.transports.local.chat_format import CHATML, ChatFormat

IM_START = "<|im_start|>"
IM_END = "<|im_end|>"
MESSAGE_HEAD = "message:\n"
CALL_PREFIX = "functions."
RESULT_NUDGE = "Use this result to answer my request, beginning with 'message:'."
DEFAULT_SYSTEM = "You are a helpful AI assistant working on the user's project folder."


def call_head(name: str) -> str:
    """The line that opens a call of `name`."""
    return f"{CALL_PREFIX}{name}:\n"


def _compact_arguments(parameters: dict[str, Any]) -> str:
    """'path, content': the required arguments, the only ones a small model's call
    grammar lets it write."""
    required = set(parameters.get("required") or [])
    return ", ".join(name for name in parameters.get("properties") or {} if name in required)


def _first_clause(description: str) -> str:
    """A description up to its first full stop, semicolon, comma or parenthesis."""
    return re.split(r"\. |; |, | \(|: ", description, maxsplit=1)[0].rstrip(".")


def tool_instructions(tools: Sequence[ToolDef], *, compact: bool = False) -> str:
    """The part of the system message that lists the tools and the answer shapes.

    `compact` (for small models) gives each tool one line: the first clause of its
    description and the arguments its grammar lets it write. The full schemas made the
    prompt twice as long, and every prompt token costs a small model on a busy machine
    more than its whole answer; the call's grammar holds the arguments to the schema
    anyway."""
    lines = ["", "", "You can use these tools:"]
    for tool in tools:
        if compact:
            args = _compact_arguments(tool.parameters)
            first = _first_clause(tool.description)
            lines.append(f"{CALL_PREFIX}{tool.name}({args}): {first}.")
            continue
        lines.append(f"\n{CALL_PREFIX}{tool.name}: {tool.description}")
        lines.append(f"arguments: {json.dumps(tool.parameters, separators=(',', ':'))}")
    lines += [
        "",
        "Reply in one of two ways.",
        "To answer the user in words, write 'message:' on the first line, then your answer.",
        "To use a tool, write 'functions.' and the tool name and ':' on the first line, "
        "then the arguments as JSON.",
        "When a tool's result arrives, answer the user with 'message:'.",
    ]
    return "\n".join(lines)


def _text(content: Any) -> str:
    """Message content as text; multi-part content keeps its text parts."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = [p.get("text", "") for p in content if isinstance(p, dict)]
        return "".join(str(part) for part in parts)
    return json.dumps(content)


def result_text(name: str, content: str, question: str = "") -> str:
    """A tool result as the user turn that carries it back to the model; without tools
    shown (`question` given), it ends by asking the user's question again, in words."""
    if question:
        return f"Result of {name}:\n{content}\n\nUsing this result, answer in words: {question}"
    return f"Result of {CALL_PREFIX}{name}:\n{content}\n\n{RESULT_NUDGE}"


def _call_parts(call: dict[str, Any]) -> tuple[str, str, str]:
    """(id, name, arguments) of a wire tool call; arguments stay a JSON string."""
    function = call.get("function") or {}
    arguments = function.get("arguments", "")
    if not isinstance(arguments, str):
        arguments = json.dumps(arguments)
    return str(call.get("id", "")), str(function.get("name", "")), arguments


def render_prompt(
    messages: Iterable[dict[str, Any]],
    tools: Sequence[ToolDef],
    *,
    with_tools: bool,
    context: str = "",
    chat: ChatFormat = CHATML,
    compact: bool = False,
) -> str:
    """The whole prompt in the model's turn format (`chat`), ending with the opened
    assistant turn.

    `context` is added to the system message (e.g. the project's files). With
    `with_tools`, the system message lists `tools`, earlier assistant text is
    written after 'message:' and earlier calls as 'functions.<name>:' lines; tool
    results come back as user turns that name the tool they answer.
    """
    messages = list(messages)
    system_parts: list[str] = []
    rest: list[dict[str, Any]] = []
    for message in messages:
        if message.get("role") == "system":
            system_parts.append(_text(message.get("content")))
        else:
            rest.append(message)
    system = ("\n\n".join(part for part in system_parts if part) or DEFAULT_SYSTEM) + context
    if with_tools and tools:
        system += tool_instructions(tools, compact=compact)
    out: list[str] = []
    if chat.system_role is not None:
        out.append(chat.turn(chat.system_role, system))
    else:  # the format has no system turn: the first user turn carries it
        first_user = next((m for m in rest if m.get("role") == "user"), None)
        rest = [
            {**m, "content": f"{system}\n\n{_text(m.get('content'))}"} if m is first_user else m
            for m in rest
        ]

    call_names: dict[str, str] = {}
    question = ""
    for message in rest:
        role = message.get("role")
        text = _text(message.get("content"))
        if role == "assistant":
            calls = [_call_parts(call) for call in message.get("tool_calls") or []]
            call_names.update((call_id, name) for call_id, name, _ in calls)
            if with_tools:
                body = [MESSAGE_HEAD + text] if text else []
                body += [call_head(name) + arguments for _, name, arguments in calls]
            else:  # a call the model would copy: only its result is shown
                body = [text] if text else []
            if body:
                out.append(chat.turn(chat.assistant_role, "\n".join(body)))
        elif role == "tool":
            name = call_names.get(str(message.get("tool_call_id")), "the tool")
            asked = "" if with_tools else question
            out.append(chat.turn("user", result_text(name, text, asked)))
        else:
            question = text
            out.append(chat.turn("user", text))
    out.append(chat.open_assistant())
    return "".join(out)


def _literal(text: str) -> str:
    return json.dumps(text)


def decision_grammar(names: Sequence[str], *, allow_message: bool) -> str:
    """GBNF for the first line of an answer: a call head, or 'message:' when allowed."""
    options = [_literal(call_head(name)) for name in names]
    if allow_message:
        options.append(_literal(MESSAGE_HEAD))
    return "root ::= " + " | ".join(options) + "\n"


def parse_call_head(text: str) -> str | None:
    """The tool name of a call head line, or None when `text` opens a message."""
    if text.startswith(CALL_PREFIX) and text.rstrip().endswith(":"):
        return text[len(CALL_PREFIX) :].rstrip()[:-1]
    return None


CUT_NOTE = "\n[… cut to fit the local model's context]"
LONG_TEXT = 2000  # characters; longer contents are halved before old exchanges are dropped
SHORT_TEXT = 200  # characters; shorter contents are never cut


def shrink_history(messages: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
    """The history one step smaller, or None when nothing more can go.

    In order: halve the longest content over LONG_TEXT characters; drop the oldest
    exchange (a user message with its answers and tool results) before the last user
    message; halve the longest content over SHORT_TEXT. Calls and their results always
    go together, and system messages stay.
    """
    longest = _longest_content(messages, LONG_TEXT)
    if longest is not None:
        return _halved(messages, longest)
    users = [i for i, m in enumerate(messages) if m.get("role") == "user"]
    first = next((i for i, m in enumerate(messages) if m.get("role") != "system"), None)
    if first is not None and len(users) >= 2:
        end = next(i for i in users if i > first)
        keep = [m for i, m in enumerate(messages) if not first <= i < end or _is_system(m)]
        return keep
    longest = _longest_content(messages, SHORT_TEXT)
    return _halved(messages, longest) if longest is not None else None


def _longest_content(messages: list[dict[str, Any]], above: int) -> int | None:
    sizes = [(len(_text(m.get("content"))), i) for i, m in enumerate(messages)]
    size, index = max(sizes, default=(0, -1))
    return index if size > above else None


def _halved(messages: list[dict[str, Any]], index: int) -> list[dict[str, Any]]:
    text = _text(messages[index].get("content")).removesuffix(CUT_NOTE)
    shorter = {**messages[index], "content": text[: len(text) // 2] + CUT_NOTE}
    return [*messages[:index], shorter, *messages[index + 1 :]]


def _is_system(message: dict[str, Any]) -> bool:
    return message.get("role") == "system"
