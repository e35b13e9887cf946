"""Every tool definition of docs/tools.md, verbatim, and role gating (docs/wire-protocol.md §4).

Parameters are docs/tools.md's exactly. Descriptions are ours (the ToolDef shape has
an optional `description`); they restate the notes of docs/tools.md so small models call well.

A ToolDef carries everything the app knows about a tool: who gets it, whether it changes
anything (and so its approval default), which argument names the call and which is a
path, whether a diff can be previewed. Nothing else keeps a table keyed by tool names.
Tools that arrive at run time (MCP servers, ACP agents) join through a ToolCatalog.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Literal, get_args

Role = Literal["assistant", "worker", "orchestrator"]
ROLES: tuple[Role, ...] = get_args(Role)
Mode = Literal["auto", "ask"]  # run without asking, or ask the person first
MustExist = Literal["file", "folder"]


@dataclass(frozen=True, slots=True)
class ToolDef:
    """The relay's flat tool shape `{name, description?, parameters}` (docs/tools.md), plus what the
    app knows about the tool.

    - `roles`: the roles whose legs offer it.
    - `read_only`: changes nothing; runs without asking by default (`approval`).
    - `summary_argument` / `summary_default`: the argument that names a call in a few
      words, and what to say when it is absent (`list_dir` with no path is ".").
    - `path_argument` / `must_exist`: the argument that is a workspace path, and whether
      it must name an existing file or folder (small local models may only name those).
    - `diff_preview`: the inspector can show the change before it is approved.
    - `origin`: "melgui" for built-in tools, "mcp:<server>" or "acp:<agent>" otherwise.
    - `touches_files`: a call that is not read-only may change the project's files, so
      it gets a checkpoint (False for tools that change only other things).
    """

    name: str
    description: str
    parameters: dict[str, Any]
    roles: tuple[Role, ...] = ROLES
    read_only: bool = False
    summary_argument: str | None = None
    summary_default: str = ""
    path_argument: str | None = None
    must_exist: MustExist | None = None
    diff_preview: bool = False
    origin: str = "melgui"
    touches_files: bool = True

    @property
    def takes_checkpoint(self) -> bool:
        """The project's files are snapshotted before and after its calls (undo)."""
        return self.touches_files and not self.read_only

    @property
    def approval(self) -> Mode:
        """The approval default: read-only tools run on their own, the rest ask."""
        return "auto" if self.read_only else "ask"

    @property
    def counts_lines(self) -> bool:
        """A call's summary counts the lines of its `content` (what a write puts down)."""
        return self.diff_preview and "content" in self.parameters.get("properties", {})

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
        read_only=True,
        summary_argument="path",
        path_argument="path",
        must_exist="file",
    ),
    ToolDef(
        "list_dir",
        "List one folder of the workspace (default: the project root), with sizes.",
        _obj({"path": _S}),
        read_only=True,
        summary_argument="path",
        summary_default=".",
        path_argument="path",
        must_exist="folder",
    ),
    ToolDef(
        "grep",
        "Search every file of the project for a regular expression. Project-wide; "
        "takes no path argument.",
        _obj({"pattern": _S}, ["pattern"]),
        read_only=True,
        summary_argument="pattern",
    ),
    ToolDef(
        "find_files",
        "Find project files whose path matches a glob pattern. Project-wide; takes no "
        "path argument.",
        _obj({"pattern": _S}, ["pattern"]),
        read_only=True,
        summary_argument="pattern",
    ),
    ToolDef(
        "write_file",
        "Write a file in the workspace, creating folders as needed.",
        _obj({"path": _S, "content": _S}, ["path", "content"]),
        summary_argument="path",
        path_argument="path",
        diff_preview=True,
    ),
    ToolDef(
        "edit_file",
        "Replace old_string with new_string in a file. old_string must match exactly "
        "and uniquely unless replace_all is true.",
        _obj(
            {"path": _S, "old_string": _S, "new_string": _S, "replace_all": _B},
            ["path", "old_string", "new_string"],
        ),
        summary_argument="path",
        path_argument="path",
        must_exist="file",
        diff_preview=True,
    ),
    ToolDef(
        "run_command",
        "Run a shell command in the project folder. The result is exit_code=N followed "
        "by combined stdout and stderr.",
        _obj({"command": _S}, ["command"]),
        summary_argument="command",
    ),
    ToolDef(
        "web_search",
        "Search the web.",
        _obj({"query": _S}, ["query"]),
        summary_argument="query",
        touches_files=False,
    ),
    ToolDef(
        "write_plan",
        "Show a plan to the person, as a title and Markdown.",
        _obj({"title": _S, "markdown": _S}, ["title", "markdown"]),
        read_only=True,
        summary_argument="title",
    ),
    ToolDef(
        "create_pdf",
        "Render Markdown or HTML content to a PDF file in the workspace; reports which "
        "engine produced the file.",
        _obj({"content": _S, "output_path": _S, "title": _S}, ["content", "output_path"]),
        summary_argument="output_path",
        path_argument="output_path",
    ),
)

MEMORY_TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "remember",
        "Save a note to the shared project memory.",
        _obj({"note": _S}, ["note"]),
        roles=("worker", "orchestrator"),
        summary_argument="note",
    ),
    ToolDef(
        "recall",
        "Read the notes saved in the shared project memory.",
        _obj({}),
        roles=("worker", "orchestrator"),
        read_only=True,
    ),
)

ORCHESTRATION_TOOLS: tuple[ToolDef, ...] = (
    ToolDef(
        "open_pane",
        "Open a terminal pane running command (a CLI agent such as claude or codex, or "
        "a shell command; the login shell when omitted). Returns the pane id.",
        _obj({"layout": _LAYOUT, "command": _S}, ["layout"]),
        roles=("orchestrator",),
        touches_files=False,
        summary_argument="command",
        summary_default="login shell",
    ),
    ToolDef(
        "spawn_agent",
        "Start a worker agent in a pane, given a task and optionally a model. Returns the pane id.",
        _obj({"layout": _LAYOUT, "model": _S, "task": _S}, ["layout", "task"]),
        roles=("orchestrator",),
        touches_files=False,
        summary_argument="task",
    ),
    ToolDef(
        "send_keys",
        "Type text into a terminal pane; a newline presses Enter.",
        _obj({"pane": _I, "text": _S}, ["pane", "text"]),
        roles=("orchestrator",),
        touches_files=False,
    ),
    ToolDef(
        "send_agent",
        "Send a message to a worker agent pane.",
        _obj({"pane": _I, "text": _S}, ["pane", "text"]),
        roles=("orchestrator",),
        touches_files=False,
    ),
    ToolDef(
        "read_pane",
        "Read a terminal pane's screen and recent scrollback.",
        _obj({"pane": _I}, ["pane"]),
        roles=("orchestrator",),
        read_only=True,
    ),
    ToolDef(
        "read_agent",
        "Read a worker agent's state and latest reply.",
        _obj({"pane": _I}, ["pane"]),
        roles=("orchestrator",),
        read_only=True,
    ),
    ToolDef(
        "list_panes",
        "List every pane: id, kind, title, state.",
        _obj({}),
        roles=("orchestrator",),
        read_only=True,
    ),
)

ALL_TOOLS: dict[str, ToolDef] = {
    tool.name: tool for tool in BASE_TOOLS + MEMORY_TOOLS + ORCHESTRATION_TOOLS
}

READ_ONLY_TOOLS: frozenset[str] = frozenset(t.name for t in ALL_TOOLS.values() if t.read_only)

# The approval default of every built-in tool.
DEFAULT_MODES: dict[str, Mode] = {name: tool.approval for name, tool in ALL_TOOLS.items()}


def tools_for_role(role: Role) -> tuple[ToolDef, ...]:
    """Exactly the built-in definitions a leg sends for `role` (docs/wire-protocol.md §4)."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    return tuple(tool for tool in ALL_TOOLS.values() if role in tool.roles)


class ToolCatalog:
    """The tools a desk offers: the built-in ones, plus those added at run time.

    Added tools (an MCP server's, an ACP agent's) come after the built-in ones, in the
    order they were added; a name is never taken twice, and built-in names never.
    """

    def __init__(self) -> None:
        self._added: dict[str, ToolDef] = {}
        self._gone: dict[str, str] = {}  # a withdrawn tool's name → why, for a late call

    def add(self, tool: ToolDef) -> None:
        if tool.name in ALL_TOOLS or tool.name in self._added:
            raise ValueError(f"a tool named {tool.name!r} already exists")
        self._added[tool.name] = tool
        self._gone.pop(tool.name, None)

    def remove(self, name: str) -> None:
        self._added.pop(name, None)

    def remove_origin(self, origin: str, reason: str = "") -> None:
        """Forget every tool `origin` added (a server stopped or changed its list);
        `reason` is what a call to one of them is answered from then on."""
        for name in [n for n, tool in self._added.items() if tool.origin == origin]:
            del self._added[name]
            if reason:
                self._gone[name] = reason
            else:
                self._gone.pop(name, None)

    def gone(self, name: str) -> str:
        """Why `name` is no longer offered ("" when it never was, or is again)."""
        return self._gone.get(name, "")

    def get(self, name: str) -> ToolDef | None:
        return ALL_TOOLS.get(name) or self._added.get(name)

    def added(self) -> tuple[ToolDef, ...]:
        return tuple(self._added.values())

    def for_role(self, role: Role) -> tuple[ToolDef, ...]:
        """The definitions a leg sends for `role`: built-in first, then added ones."""
        return tools_for_role(role) + tuple(t for t in self._added.values() if role in t.roles)


def normalize_layout(value: object) -> Literal["right", "down", "tab"]:
    """docs/tools.md's safety net: any layout outside the enum is treated as "tab"."""
    if value == "right":
        return "right"
    if value == "down":
        return "down"
    return "tab"
