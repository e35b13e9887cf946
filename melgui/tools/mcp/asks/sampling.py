"""A server's `sampling/createMessage`: the request shown to the person (what is sent, to
which model), then, once approved, one leg on the current connection with no tools,
limited to the request's maxTokens (and to MAX_SAMPLING_TOKENS) and to MAX_INPUT_CHARS
of input.

    request = sampling_request("files", params, call, model="gpt-x")
    manager.ask_sampling(request)              # the window asks; exec allows or refuses
    if await request.answer: result = await run_sampling(target, params)
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from melgui.core.protocol.events import Done, StreamError, TextDelta, ToolCalls
from melgui.core.protocol.tools.mcp.asks import RunningCall, SamplingRequest, SamplingTarget
from melgui.core.protocol.transport import LegRequest
from melgui.tools.mcp.calls import Flight

if TYPE_CHECKING:  # the SDK's types (0.15 s, 5 MB) load with the first request
    import mcp_types as types

__all__ = [
    "SamplingRequest", "SamplingTarget", "answer_sampling", "run_sampling", "sampling_request",
]  # fmt: skip

MAX_SAMPLING_TOKENS = 4096
MAX_INPUT_CHARS = 100_000
CHARS_PER_TOKEN = 4  # a cut on the answer's length when the server cannot count tokens


def _text(content: Any) -> str:
    import mcp_types as types

    blocks = content if isinstance(content, list) else [content]
    pieces = []
    for block in blocks:
        if isinstance(block, types.TextContent):
            pieces.append(block.text)
        else:
            pieces.append(f"[{getattr(block, 'type', 'content')} not sent]")
    return "\n".join(pieces)


def wire_messages(params: types.CreateMessageRequestParams) -> list[dict[str, Any]]:
    """The request as chat messages: its system prompt, then each message's text."""
    messages = []
    if params.system_prompt:
        messages.append({"role": "system", "content": params.system_prompt})
    for message in params.messages:
        messages.append({"role": message.role, "content": _text(message.content)})
    return messages


def sampling_request(
    server: str,
    params: types.CreateMessageRequestParams,
    call: RunningCall | None,
    *,
    model: str,
) -> SamplingRequest:
    tokens = min(params.max_tokens, MAX_SAMPLING_TOKENS)
    return SamplingRequest(server, model, wire_messages(params), tokens, call)


def too_long(params: types.CreateMessageRequestParams) -> str:
    """Why a request is refused before anyone is asked ("" when it is within limits)."""
    size = sum(len(str(m.get("content", ""))) for m in wire_messages(params))
    if size > MAX_INPUT_CHARS:
        return (
            f"the request carries {size:,} characters, more than melgui sends ({MAX_INPUT_CHARS:,})"
        )
    return ""


async def run_sampling(
    target: SamplingTarget,
    params: types.CreateMessageRequestParams,
    wire: Callable[[Any], None] | None = None,
) -> types.CreateMessageResult | types.ErrorData:
    """One leg without tools; the answer is cut at the request's token limit."""
    import mcp_types as types

    tokens = min(params.max_tokens, MAX_SAMPLING_TOKENS)
    request = LegRequest(
        model=target.model,
        messages=wire_messages(params),
        tools=(),
        tool_role="assistant",
        cwd=target.cwd,
        tool_choice="none",
    )
    pieces: list[str] = []
    stop = "endTurn"
    stream = target.transport.stream(request, wire)
    try:
        async for event in stream:
            match event:
                case TextDelta(text=piece):
                    pieces.append(piece)
                    if sum(map(len, pieces)) >= tokens * CHARS_PER_TOKEN:
                        stop = "maxTokens"
                        break
                case StreamError(message=message):
                    return types.ErrorData(code=types.INTERNAL_ERROR, message=message)
                case Done() | ToolCalls():
                    break
    finally:
        aclose = getattr(stream, "aclose", None)
        if aclose is not None:
            with contextlib.suppress(Exception):
                await aclose()
    text = "".join(pieces)[: tokens * CHARS_PER_TOKEN]
    return types.CreateMessageResult(
        role="assistant",
        content=types.TextContent(type="text", text=text),
        model=target.model,
        stop_reason=stop,
    )


async def answer_sampling(
    server: str,
    params: types.CreateMessageRequestParams,
    target: SamplingTarget | None,
    *,
    ask: Callable[[SamplingRequest], None] | None,
    allowed: bool,
    flight: Flight | None,
    log: Callable[[str], None],
) -> types.CreateMessageResult | types.ErrorData:
    """A server's request: through `target` once the person approved it (`ask`: the
    window) or `allowed` (exec's flag); refused in words otherwise."""
    import mcp_types as types

    refused = too_long(params) or ("" if target is not None else "melgui has no model here")
    if not refused and ask is None and not allowed:
        refused = "melgui exec refuses sampling requests unless run with --mcp-sampling allow"
    if not refused and ask is not None and target is not None:
        request = sampling_request(
            server, params, flight.call if flight else None, model=target.model
        )
        waiting = flight.waiting_on_the_person() if flight else contextlib.nullcontext()
        try:
            ask(request)
            with waiting:
                approved = await request.answer
        finally:
            request.refuse()
        refused = "" if approved else "the person refused the sampling request"
    if refused or target is None:
        log(f"[melgui] sampling refused: {refused}")
        return types.ErrorData(code=types.INVALID_REQUEST, message=refused)
    log(f"[melgui] sampling with {target.model}")
    return await run_sampling(target, params)
