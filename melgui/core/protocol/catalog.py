"""Every tool definition of the seed, verbatim, and the role gating of relay-protocol.md §4.

Parameters are the seed's exactly. Descriptions are ours (the seed's ToolDef shape has
an optional `description`); they restate the seed's notes so small models call well.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal, get_args

Role = Literal["assistant", "worker", "orchestrator"]
ROLES: tuple[Role, ...] = get_args(Role)


@dataclass(frozen=True, slots=True)
class ToolDef:
    """The relay's flat tool shape: `{name, description?, parameters}` (seed)."""

    name: str
    description: str
    parameters: dict[str, Any]

    def to_relay(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
        }

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": self.to_relay()}


def _obj(properties: dict[str, Any], required: list[str] | None = None) -> dict[str, Any]:
    schema: dict[str, Any] = {"type": "object"}
    if required is not None:
        schema["required"] = required
    schema["properties"] = properties
    return schema


_S = {"type": "string"}
_I = {"type": "integer"}
_B = {"type": "boolean"}
_LAYOUT = {"type": "string", "enum": ["right", "down", "tab"]}

BASE_TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "read_file",
        "Read a file from the workspace. offset and limit are in lines; a truncated "
        "read reports the offset to resume from.",
        _obj({"path": _S, "offset": _I, "limit": _I}, ["path"]),
    ),
    ToolDef(
        "list_dir",
        "List one folder of the workspace (default: the project root), with sizes.",
        _obj({"path": _S}),
    ),
    ToolDef(
        "grep",
        "Search every file of the project for a regular expression. Project-wide; "
        "takes no path argument.",
        _obj({"pattern": _S}, ["pattern"]),
    ),
    ToolDef(
        "find_files",
        "Find project files whose path matches a glob pattern. Project-wide; takes no "
        "path argument.",
        _obj({"pattern": _S}, ["pattern"]),
    ),
    ToolDef(
        "write_file",
        "Write a file in the workspace, creating folders as needed.",
        _obj({"path": _S, "content": _S}, ["path", "content"]),
    ),
    ToolDef(
        "edit_file",
        "Replace old_string with new_string in a file. old_string must match exactly "
        "and uniquely unless replace_all is true.",
        _obj(
            {"path": _S, "old_string": _S, "new_string": _S, "replace_all": _B},
            ["path", "old_string", "new_string"],
        ),
    ),
    ToolDef(
        "run_command",
        "Run a shell command in the project folder. The result is exit_code=N followed "
        "by combined stdout and stderr.",
        _obj({"command": _S}, ["command"]),
    ),
    ToolDef("web_search", "Search the web.", _obj({"query": _S}, ["query"])),
    ToolDef(
        "write_plan",
        "Show a plan to the person, as a title and Markdown.",
        _obj({"title": _S, "markdown": _S}, ["title", "markdown"]),
    ),
    ToolDef(
        "create_pdf",
        "Render Markdown or HTML content to a PDF file in the workspace; reports which "
        "engine produced the file.",
        _obj({"content": _S, "output_path": _S, "title": _S}, ["content", "output_path"]),
    ),
)

MEMORY_TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "remember",
        "Save a note to the shared project memory.",
        _obj({"note": _S}, ["note"]),
    ),
    ToolDef("recall", "Read the notes saved in the shared project memory.", _obj({})),
)

ORCHESTRATION_TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "open_pane",
        "Open a terminal pane running command (a CLI agent such as claude or codex, or "
        "a shell command; the login shell when omitted). Returns the pane id.",
        _obj({"layout": _LAYOUT, "command": _S}, ["layout"]),
    ),
    ToolDef(
        "spawn_agent",
        "Start a worker agent in a pane, given a task and optionally a model. Returns the pane id.",
        _obj({"layout": _LAYOUT, "model": _S, "task": _S}, ["layout", "task"]),
    ),
    ToolDef(
        "send_keys",
        "Type text into a terminal pane; a newline presses Enter.",
        _obj({"pane": _I, "text": _S}, ["pane", "text"]),
    ),
    ToolDef(
        "send_agent",
        "Send a message to a worker agent pane.",
        _obj({"pane": _I, "text": _S}, ["pane", "text"]),
    ),
    ToolDef(
        "read_pane",
        "Read a terminal pane's screen and recent scrollback.",
        _obj({"pane": _I}, ["pane"]),
    ),
    ToolDef(
        "read_agent",
        "Read a worker agent's state and latest reply.",
        _obj({"pane": _I}, ["pane"]),
    ),
    ToolDef("list_panes", "List every pane: id, kind, title, state.", _obj({})),
)

ALL_TOOLS: dict[str, ToolDef] = {
    tool.name: tool for tool in BASE_TOOLS + MEMORY_TOOLS + ORCHESTRATION_TOOLS
}

READ_ONLY_TOOLS: frozenset[str] = frozenset(
    {
        "read_file",
        "list_dir",
        "grep",
        "find_files",
        "recall",
        "read_pane",
        "read_agent",
        "list_panes",
        "write_plan",
    }
)


def tools_for_role(role: Role) -> tuple[ToolDef, ...]:
    """Exactly the definitions a leg sends for `role` (relay-protocol.md §4)."""
    if role == "assistant":
        return BASE_TOOLS
    if role == "worker":
        return BASE_TOOLS + MEMORY_TOOLS
    if role == "orchestrator":
        return BASE_TOOLS + MEMORY_TOOLS + ORCHESTRATION_TOOLS
    raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")


def normalize_layout(value: object) -> Literal["right", "down", "tab"]:
    """The seed's safety net: any layout outside the enum is treated as "tab"."""
    if value == "right":
        return "right"
    if value == "down":
        return "down"
    return "tab"
