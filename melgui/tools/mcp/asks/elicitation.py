"""A server's request for input (`elicitation/create`) as something a person can answer.
Form mode: the requested schema read into fields, the answer checked against them, and
the three ways out the spec gives (accept with content, decline, cancel). URL mode: an
address the server wants the person to visit (a sign-in of its own, a payment), shown in
full with its host, opened only when the person says so (accept), else declined or
cancelled.

    request = InputRequest.of("files", params.message, params.requested_schema, call)
    manager.ask_input(request)          # the window shows a form; exec never sets this
    answer = await request.answer        # ("accept", {...}) | ("decline", None) | ...

The spec limits a form to a flat object of primitives: strings (with a format or a
length), numbers and integers (with bounds), booleans, and enums (single choice, or a
multi-select array). Anything else in a schema is shown as a string.
"""

from __future__ import annotations

# The types live at the protocol's level, where a window that is a view of the melgui
# host reads them too; they are named here for the MCP code that makes them.
from melgui.core.protocol.tools.mcp.asks import (
    Action,
    Field,
    InputRequest,
    Kind,
    checked,
    defaults_of,
    fields_of,
    url_problem,
    url_warning,
)

__all__ = [
    "Action", "Field", "InputRequest", "Kind", "checked", "defaults_of", "fields_of",
    "url_problem", "url_warning",
]  # fmt: skip
