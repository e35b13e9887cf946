"""open_pane, spawn_agent, send_keys, send_agent, read_pane, read_agent, list_panes:
docs/tools.md's definitions, verbatim, for the orchestrator role."""

from __future__ import annotations

from typing import Literal

from melgui.core.protocol.tools.definition import ToolDef

Layout = Literal["right", "down", "tab"]
_LAYOUT = {"type": "string", "enum": ["right", "down", "tab"]}

OPEN_PANE = ToolDef(
    "open_pane",
    "Open a terminal pane running command (a CLI agent such as claude or codex, or "
    "a shell command; the login shell when omitted). Returns the pane id.",
    {
        "type": "object",
        "required": ["layout"],
        "properties": {"layout": _LAYOUT, "command": {"type": "string"}},
    },
    roles=("orchestrator",),
    touches_files=False,
    summary_argument="command",
    summary_default="login shell",
)

SPAWN_AGENT = ToolDef(
    "spawn_agent",
    "Start a worker agent in a pane, given a task and optionally a model. Returns the pane id.",
    {
        "type": "object",
        "required": ["layout", "task"],
        "properties": {"layout": _LAYOUT, "model": {"type": "string"}, "task": {"type": "string"}},
    },
    roles=("orchestrator",),
    touches_files=False,
    summary_argument="task",
)

SEND_KEYS = ToolDef(
    "send_keys",
    "Type text into a terminal pane; a newline presses Enter.",
    {
        "type": "object",
        "required": ["pane", "text"],
        "properties": {"pane": {"type": "integer"}, "text": {"type": "string"}},
    },
    roles=("orchestrator",),
    touches_files=False,
)

SEND_AGENT = ToolDef(
    "send_agent",
    "Send a message to a worker agent pane.",
    {
        "type": "object",
        "required": ["pane", "text"],
        "properties": {"pane": {"type": "integer"}, "text": {"type": "string"}},
    },
    roles=("orchestrator",),
    touches_files=False,
)

READ_PANE = ToolDef(
    "read_pane",
    "Read a terminal pane's screen and recent scrollback.",
    {"type": "object", "required": ["pane"], "properties": {"pane": {"type": "integer"}}},
    roles=("orchestrator",),
    read_only=True,
)

READ_AGENT = ToolDef(
    "read_agent",
    "Read a worker agent's state and latest reply, the files it changed in its worktree, "
    "and where its changes overlap another worker's (shared files, conflicts to be).",
    {"type": "object", "required": ["pane"], "properties": {"pane": {"type": "integer"}}},
    roles=("orchestrator",),
    read_only=True,
)

LIST_PANES = ToolDef(
    "list_panes",
    "List every pane: id, kind, title, state; and where workers' changes overlap.",
    {"type": "object", "properties": {}},
    roles=("orchestrator",),
    read_only=True,
)

PANE_TOOLS: tuple[ToolDef, ...] = (
    OPEN_PANE,
    SPAWN_AGENT,
    SEND_KEYS,
    SEND_AGENT,
    READ_PANE,
    READ_AGENT,
    LIST_PANES,
)


def normalize_layout(value: object) -> Layout:
    """docs/tools.md's safety net: any layout outside the enum is treated as "tab"."""
    if value == "right":
        return "right"
    if value == "down":
        return "down"
    return "tab"
