"""How a server's request for input is answered, in the window and in exec.

- The window (`ask`): the person answers a form, or for an address sees it in full with
  its host and the server's words, and it opens in their browser only when they say so.
- exec: a form is declined, or with `--mcp-input defaults` accepted with its defaults; an
  address is declined with a line on stderr, or with `--mcp-open-urls` shown there and
  opened in the browser (`webbrowser`, which honours `$BROWSER`).
"""

from __future__ import annotations

import asyncio
import contextlib
import webbrowser
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal

from melgui.tools.mcp.asks.elicitation import (
    InputRequest,
    defaults_of,
    fields_of,
    url_problem,
    url_warning,
)
from melgui.tools.mcp.calls import Flight

if TYPE_CHECKING:  # the SDK's types (0.15 s, 5 MB) load with a server's first request
    import mcp_types as types


@dataclass
class InputPolicy:
    """What a server's requests for input get where no person answers them (exec)."""

    forms: Literal["decline", "defaults"] = "decline"
    open_urls: bool = False  # --mcp-open-urls: open a requested address in the browser
    # How an address is opened once allowed (the person's click, or the flag).
    browser: Callable[[str], bool] = field(default=webbrowser.open)


async def _exec_url(
    server: str, request: InputRequest, policy: InputPolicy, say: Callable[[str], None]
) -> types.ElicitResult:
    import mcp_types as types

    warning = url_warning(request.url)
    caution = f" (careful: {warning})" if warning else ""
    if not policy.open_urls:
        say(
            f"MCP server {server} asks you to open {request.url}{caution}: {request.message} "
            "— declined; run with --mcp-open-urls to open such addresses"
        )
        return types.ElicitResult(action="decline")
    say(f"MCP server {server} asks you to open {request.url}{caution}: {request.message}")
    opened = await asyncio.to_thread(policy.browser, request.url)
    if not opened:
        say(f"no browser opened; open {request.url} yourself")
    return types.ElicitResult(action="accept")


async def answer_input(
    server: str,
    params: types.ElicitRequestParams,
    *,
    ask: Callable[[InputRequest], None] | None,
    policy: InputPolicy,
    flight: Flight | None,
    asking: list[InputRequest],
    log: Callable[[str], None],
    say: Callable[[str], None],
) -> types.ElicitResult:
    """The answer to one request; it belongs to the newest call in flight (`flight`).
    `asking` holds the requests open now (a call that ends takes its own away)."""
    import mcp_types as types

    message = " ".join(params.message.split())
    call = flight.call if flight is not None else None
    if isinstance(params, types.ElicitRequestURLParams):
        request = InputRequest.for_url(
            server, message, params.url, params.elicitation_id or "", call
        )
        log(f"[melgui] the server asked to open {params.url}: {message}")
        problem = url_problem(params.url)
        if problem:
            log(f"[melgui] declined: {problem}")
            return types.ElicitResult(action="decline")
        if ask is None:
            return await _exec_url(server, request, policy, say)
    else:
        request = InputRequest.of(server, message, params.requested_schema, call)
        how = "the person" if ask is not None else policy.forms
        log(f"[melgui] the server asked for input ({how}): {message}")
        if ask is None:
            if policy.forms != "defaults":
                return types.ElicitResult(action="decline")
            defaults = defaults_of(fields_of(params.requested_schema))
            return types.ElicitResult(action="accept", content=defaults)
    asking.append(request)
    waiting = flight.waiting_on_the_person() if flight else contextlib.nullcontext()
    try:
        ask(request)
        with waiting:
            action, content = await request.answer
    finally:
        asking.remove(request)
        request.cancel()
    log(f"[melgui] the person answered: {action}")
    if request.url and action == "accept" and not request.completed:
        await asyncio.to_thread(policy.browser, request.url)
    return types.ElicitResult(action=action, content=content)


def completed(asking: list[InputRequest], elicitation_id: str) -> None:
    """The server says the interaction behind an address is done: a request still shown
    for it goes (answered accept, the browser not opened: there is nothing left to do)."""
    for request in list(asking):
        if request.url and request.elicitation_id == elicitation_id:
            request.completed = True
            request.accept({})
