"""create_pdf: docs/tools.md's definition, verbatim."""

from __future__ import annotations

from melgui.core.protocol.tools.definition import ToolDef

CREATE_PDF = ToolDef(
    "create_pdf",
    "Render Markdown or HTML content to a PDF file in the workspace; reports which "
    "engine produced the file.",
    {
        "type": "object",
        "required": ["content", "output_path"],
        "properties": {
            "content": {"type": "string"},
            "output_path": {"type": "string"},
            "title": {"type": "string"},
        },
    },
    summary_argument="output_path",
    path_argument="output_path",
)
