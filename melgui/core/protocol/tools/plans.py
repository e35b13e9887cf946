"""write_plan: docs/tools.md's definition, verbatim."""

from __future__ import annotations

from melgui.core.protocol.tools.definition import ToolDef

WRITE_PLAN = ToolDef(
    "write_plan",
    "Show a plan to the person, as a title and Markdown.",
    {
        "type": "object",
        "required": ["title", "markdown"],
        "properties": {"title": {"type": "string"}, "markdown": {"type": "string"}},
    },
    read_only=True,
    summary_argument="title",
)
