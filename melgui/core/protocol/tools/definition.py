"""The shape of one tool's contract, and its arguments decoded by that contract's schema."""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any, Generic, Literal, TypeVar, get_args

from melgui.core.protocol.tooling import ToolError, ToolOutcome

Role = Literal["assistant", "worker", "orchestrator"]
ROLES: tuple[Role, ...] = get_args(Role)
Mode = Literal["auto", "ask"]  # run without asking, or ask the person first
MustExist = Literal["file", "folder"]
In = TypeVar("In")


def shorten(text: str, limit: int = 80) -> str:
    one_line = " ".join(text.split())
    return one_line if len(one_line) <= limit else one_line[: limit - 1] + "…"


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
    - `state_only`: it reads nothing and writes only the conversation's own state (a pin):
      it runs without asking, in plan mode too.
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
    state_only: bool = False

    @property
    def takes_checkpoint(self) -> bool:
        """The project's files are snapshotted before and after its calls (undo)."""
        return self.touches_files and not self.read_only and not self.state_only

    @property
    def approval(self) -> Mode:
        """The approval default: read-only and state-only tools run on their own, the
        rest ask."""
        return "auto" if self.read_only or self.state_only else "ask"

    @property
    def changes_nothing_outside(self) -> bool:
        """It changes nothing beyond the conversation: what plan mode lets run."""
        return self.read_only or self.state_only

    @property
    def counts_lines(self) -> bool:
        """A call's summary counts the lines of its `content` (what a write puts down)."""
        return self.diff_preview and "content" in self.properties

    @property
    def properties(self) -> dict[str, Any]:
        properties: dict[str, Any] = self.parameters.get("properties", {})
        return properties

    def summarize(self, arguments: dict[str, Any], limit: int = 80) -> str:
        """A call in a few words: `src/app.py (3 lines)`, `right: pytest -q`, `pane 2: ls`."""
        properties = self.properties
        if "pane" in properties and "pane" in arguments:
            text = arguments.get("text")
            head = f"pane {arguments['pane']}"
            return shorten(f"{head}: {text}" if isinstance(text, str) else head, limit)
        key = self.summary_argument
        value = arguments.get(key) if key else None
        if not value and self.summary_default:
            value = self.summary_default
        if isinstance(value, str):
            summary = value
            if self.counts_lines and isinstance(arguments.get("content"), str):
                lines = arguments["content"].count("\n") + 1
                summary += f" ({lines} line{'s' if lines != 1 else ''})"
            if "layout" in properties and isinstance(arguments.get("layout"), str):
                summary = f"{arguments['layout']}: {summary}"
            return shorten(summary, limit)
        return first_value(arguments, limit)

    def to_relay(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "description": self.description,
            "parameters": copy.deepcopy(self.parameters),
        }

    def to_openai(self) -> dict[str, Any]:
        return {"type": "function", "function": self.to_relay()}


def first_value(arguments: dict[str, Any], limit: int = 80) -> str:
    """A call of a tool that names no summary argument: its first plain value."""
    for item in arguments.values():
        if isinstance(item, str | int | float) and not isinstance(item, bool):
            return shorten(str(item), limit)
    return ""


# -- arguments, as the schema reads them ------------------------------------------------

_JSON_TYPE = {
    str: "string",
    int: "integer",
    float: "number",
    bool: "boolean",
    list: "array",
    dict: "object",
    type(None): "null",
}
_WANTED = {"string": "a string", "integer": "an integer", "boolean": "true or false"}


def _type_name(value: object) -> str:
    return _JSON_TYPE.get(type(value), type(value).__name__)


def _checked(name: str, kind: str, value: object) -> object:
    if kind == "string" and not isinstance(value, str):
        raise ToolError(f"Argument {name!r} must be a string, not {_type_name(value)}.")
    if kind == "integer":
        # JSON has one number type: 10.0 is an integer in disguise; true is not.
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        if isinstance(value, bool) or not isinstance(value, int):
            raise ToolError(f"Argument {name!r} must be an integer, not {_type_name(value)}.")
    if kind == "boolean" and not isinstance(value, bool):
        raise ToolError(f"Argument {name!r} must be true or false, not {_type_name(value)}.")
    return value


def schema_values(tool: ToolDef, arguments: dict[str, Any]) -> dict[str, Any]:
    """The arguments the schema names, each of its type; null counts as absent.

    A missing required argument or a value of the wrong type is a one-line ToolError.
    Enums are not enforced: docs/tools.md gives each its own safety net (a layout).
    """
    required = tool.parameters.get("required", [])
    values: dict[str, Any] = {}
    for name, schema in tool.properties.items():
        value = arguments.get(name)
        kind = schema.get("type", "")
        if value is None:
            if name in required:
                raise ToolError(f"Missing required argument {name!r} ({_WANTED[kind]}).")
            continue
        values[name] = _checked(name, kind, value)
    return values


def at_least(name: str, value: int | None, minimum: int) -> None:
    """A bound the seed's schema does not state (it has no `minimum`)."""
    if value is not None and value < minimum:
        raise ToolError(f"Argument {name!r} must be at least {minimum}, got {value}.")


def decode_input(tool: ToolDef, input_type: type[In], arguments: dict[str, Any]) -> In:
    """`input_type` (a dataclass whose fields are the schema's properties) from a call's
    arguments; its `__post_init__` holds the checks the schema cannot express."""
    values = schema_values(tool, arguments)
    names = {field.name for field in dataclasses.fields(input_type)}  # type: ignore[arg-type]
    return input_type(**{name: value for name, value in values.items() if name in names})


C = TypeVar("C")


@dataclass(frozen=True, slots=True)
class Tool(Generic[C, In]):
    """One tool: its definition, its typed input and its handler, run in a context `C`
    (the workspace tools' ToolContext, the pane tools' Panes).

    `parse` reads a call's arguments into the input (by default: the schema's values into
    the `input` dataclass); a ToolError from it or the handler is the model's result.
    """

    definition: ToolDef
    input: type[In]
    handler: Callable[[C, In], Awaitable[ToolOutcome]]
    parse: Callable[[dict[str, Any]], In] | None = None

    @property
    def name(self) -> str:
        return self.definition.name

    def read(self, arguments: dict[str, Any]) -> In:
        if self.parse is not None:
            return self.parse(arguments)
        return decode_input(self.definition, self.input, arguments)

    async def run(self, context: C, arguments: dict[str, Any]) -> ToolOutcome:
        """The call's outcome; raises ToolError for what the model got wrong or what failed
        as expected, and turns an unexpected OS failure (a disk error, a folder deleted
        meanwhile) into one."""
        given = self.read(arguments)
        try:
            return await self.handler(context, given)
        except OSError as exc:
            detail = exc.strerror or str(exc) or type(exc).__name__
            raise ToolError(f"{self.name} failed: {detail}.") from None
