"""web_search: docs/tools.md's definition, verbatim."""

from __future__ import annotations

from melgui.core.protocol.tools.definition import ToolDef

WEB_SEARCH = ToolDef(
    "web_search",
    "Search the web.",
    {"type": "object", "required": ["query"], "properties": {"query": {"type": "string"}}},
    summary_argument="query",
    touches_files=False,
)
