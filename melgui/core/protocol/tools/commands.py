"""run_command: docs/tools.md's definition, verbatim."""

from __future__ import annotations

from melgui.core.protocol.tools.definition import ToolDef

RUN_COMMAND = ToolDef(
    "run_command",
    "Run a shell command in the project folder. The result is exit_code=N followed "
    "by combined stdout and stderr.",
    {"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}},
    summary_argument="command",
)
