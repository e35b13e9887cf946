"""grep and find_files: docs/tools.md's definitions, verbatim."""

from __future__ import annotations

from melgui.core.protocol.tools.definition import ToolDef

GREP = ToolDef(
    "grep",
    "Search every file of the project for a regular expression. Project-wide; "
    "takes no path argument.",
    {"type": "object", "required": ["pattern"], "properties": {"pattern": {"type": "string"}}},
    read_only=True,
    summary_argument="pattern",
)

FIND_FILES = ToolDef(
    "find_files",
    "Find project files whose path matches a glob pattern. Project-wide; takes no path argument.",
    {"type": "object", "required": ["pattern"], "properties": {"pattern": {"type": "string"}}},
    read_only=True,
    summary_argument="pattern",
)
