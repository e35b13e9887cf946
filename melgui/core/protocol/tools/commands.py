"""run_command: docs/tools.md's definition, verbatim; and whether its sandbox works here."""

from __future__ import annotations

from dataclasses import dataclass

from melgui.core.protocol.tools.definition import ToolDef

RUN_COMMAND = ToolDef(
    "run_command",
    "Run a shell command in the project folder. The result is exit_code=N followed "
    "by combined stdout and stderr.",
    {"type": "object", "required": ["command"], "properties": {"command": {"type": "string"}}},
    summary_argument="command",
)


@dataclass(frozen=True, slots=True)
class SandboxStatus:
    """Whether run_command can run in bubblewrap's sandbox on this machine; `message`
    names the bwrap used, or says why not."""

    available: bool
    message: str
