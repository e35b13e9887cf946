"""The pane tools' contract: their typed inputs, and what runs them (`Panes`).

The window's panes implement `Panes` (melgui.ui.panes.orchestration); a host without
panes (melgui exec, melgui acp) supplies `NoPanes`, whose refusal is the model's result.
The definitions are docs/tools.md's (melgui.core.protocol.tools.panes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from melgui.core.protocol.tooling import ToolError, ToolOutcome, ToolRegistry
from melgui.core.protocol.tools.definition import In, Tool
from melgui.core.protocol.tools.panes import (
    LIST_PANES,
    OPEN_PANE,
    READ_AGENT,
    READ_PANE,
    SEND_AGENT,
    SEND_KEYS,
    SPAWN_AGENT,
    Layout,
    normalize_layout,
)


class Panes(Protocol):
    """What runs the pane tools: one method per tool, each answering its call."""

    def refusal(self, tool: str) -> str | None:
        """Why `tool` cannot run here, in words for the model; None when it can."""
        ...

    async def open_pane(self, layout: Layout, command: str | None) -> ToolOutcome: ...

    async def spawn_agent(self, layout: Layout, task: str, model: str | None) -> ToolOutcome: ...

    async def send_keys(self, pane: int, text: str) -> ToolOutcome: ...

    async def send_agent(self, pane: int, text: str) -> ToolOutcome: ...

    async def read_pane(self, pane: int) -> ToolOutcome: ...

    async def read_agent(self, pane: int) -> ToolOutcome: ...

    async def list_panes(self) -> ToolOutcome: ...


@dataclass(frozen=True, slots=True)
class NoPanes:
    """A host without panes: every pane tool is refused, saying where the call ran
    ("this is a headless run (melgui exec)")."""

    where: str = "this session has no window"

    def refusal(self, tool: str) -> str | None:
        return (
            f"{tool} needs panes, which only the melgui window has; {self.where}. "
            "Do the work with the other tools."
        )

    async def open_pane(self, layout: Layout, command: str | None) -> ToolOutcome:
        raise ToolError(self.refusal("open_pane") or "")

    async def spawn_agent(self, layout: Layout, task: str, model: str | None) -> ToolOutcome:
        raise ToolError(self.refusal("spawn_agent") or "")

    async def send_keys(self, pane: int, text: str) -> ToolOutcome:
        raise ToolError(self.refusal("send_keys") or "")

    async def send_agent(self, pane: int, text: str) -> ToolOutcome:
        raise ToolError(self.refusal("send_agent") or "")

    async def read_pane(self, pane: int) -> ToolOutcome:
        raise ToolError(self.refusal("read_pane") or "")

    async def read_agent(self, pane: int) -> ToolOutcome:
        raise ToolError(self.refusal("read_agent") or "")

    async def list_panes(self) -> ToolOutcome:
        raise ToolError(self.refusal("list_panes") or "")


class PaneTool(Tool[Panes, In]):
    """A pane tool: refused before its arguments are read when the panes say so."""

    __slots__ = ()

    async def run(self, context: Panes, arguments: dict[str, Any]) -> ToolOutcome:
        refusal = context.refusal(self.name)
        if refusal is not None:
            raise ToolError(refusal)
        return await Tool.run(self, context, arguments)


# -- inputs: a pane id may come as "3"; the messages name the pane tools' own terms -------


def _text(arguments: dict[str, Any], name: str, *, required: bool) -> str | None:
    value = arguments.get(name)
    if value is None:
        if required:
            raise ToolError(f"Missing required argument {name!r}.")
        return None
    if not isinstance(value, str):
        raise ToolError(f"Argument {name!r} must be a string, not {type(value).__name__}.")
    return value


def _pane(arguments: dict[str, Any]) -> int:
    value = arguments.get("pane")
    if isinstance(value, bool) or value is None:
        raise ToolError("Argument 'pane' must be an integer pane id (see list_panes).")
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str) and value.strip().lstrip("-").isdigit():
        return int(value.strip())
    raise ToolError(f"Argument 'pane' must be an integer pane id, not {value!r}.")


@dataclass(frozen=True, slots=True)
class OpenPaneInput:
    layout: Layout
    command: str | None

    @classmethod
    def parse(cls, arguments: dict[str, Any]) -> OpenPaneInput:
        command = _text(arguments, "command", required=False)
        return cls(normalize_layout(arguments.get("layout")), command)


@dataclass(frozen=True, slots=True)
class SpawnAgentInput:
    layout: Layout
    task: str
    model: str | None

    @classmethod
    def parse(cls, arguments: dict[str, Any]) -> SpawnAgentInput:
        layout = normalize_layout(arguments.get("layout"))
        task = _text(arguments, "task", required=True) or ""
        if not task.strip():
            raise ToolError("Argument 'task' must not be empty.")
        model = _text(arguments, "model", required=False)
        return cls(layout, task, model.strip() if model else None)


@dataclass(frozen=True, slots=True)
class KeysInput:
    pane: int
    text: str

    @classmethod
    def parse(cls, arguments: dict[str, Any]) -> KeysInput:
        pane = _pane(arguments)
        return cls(pane, _text(arguments, "text", required=True) or "")


@dataclass(frozen=True, slots=True)
class MessageInput:
    pane: int
    text: str

    @classmethod
    def parse(cls, arguments: dict[str, Any]) -> MessageInput:
        pane = _pane(arguments)
        text = _text(arguments, "text", required=True) or ""
        if not text.strip():
            raise ToolError("Argument 'text' must not be empty.")
        return cls(pane, text)


@dataclass(frozen=True, slots=True)
class PaneInput:
    pane: int

    @classmethod
    def parse(cls, arguments: dict[str, Any]) -> PaneInput:
        return cls(_pane(arguments))


@dataclass(frozen=True, slots=True)
class NoInput:
    @classmethod
    def parse(cls, arguments: dict[str, Any]) -> NoInput:
        return cls()


async def _open_pane(panes: Panes, given: OpenPaneInput) -> ToolOutcome:
    return await panes.open_pane(given.layout, given.command)


async def _spawn_agent(panes: Panes, given: SpawnAgentInput) -> ToolOutcome:
    return await panes.spawn_agent(given.layout, given.task, given.model)


async def _send_keys(panes: Panes, given: KeysInput) -> ToolOutcome:
    return await panes.send_keys(given.pane, given.text)


async def _send_agent(panes: Panes, given: MessageInput) -> ToolOutcome:
    return await panes.send_agent(given.pane, given.text)


async def _read_pane(panes: Panes, given: PaneInput) -> ToolOutcome:
    return await panes.read_pane(given.pane)


async def _read_agent(panes: Panes, given: PaneInput) -> ToolOutcome:
    return await panes.read_agent(given.pane)


async def _list_panes(panes: Panes, given: NoInput) -> ToolOutcome:
    return await panes.list_panes()


PANE_TOOLS: tuple[PaneTool[Any], ...] = (
    PaneTool(OPEN_PANE, OpenPaneInput, _open_pane, OpenPaneInput.parse),
    PaneTool(SPAWN_AGENT, SpawnAgentInput, _spawn_agent, SpawnAgentInput.parse),
    PaneTool(SEND_KEYS, KeysInput, _send_keys, KeysInput.parse),
    PaneTool(SEND_AGENT, MessageInput, _send_agent, MessageInput.parse),
    PaneTool(READ_PANE, PaneInput, _read_pane, PaneInput.parse),
    PaneTool(READ_AGENT, PaneInput, _read_agent, PaneInput.parse),
    PaneTool(LIST_PANES, NoInput, _list_panes, NoInput.parse),
)


def add_pane_tools(registry: ToolRegistry, panes: Callable[[], Panes]) -> None:
    """The seven pane tools into `registry`, each call run by whatever `panes()` gives."""
    for tool in PANE_TOOLS:
        registry.add(tool, panes)
