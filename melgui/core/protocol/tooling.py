"""The contract between the agent loop and whatever executes tools."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from melgui.core.protocol.result_parts import ResultPart

OutcomeStatus = Literal["ok", "error"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """A finished call: the text the model gets back, and whether it succeeded.

    `parts` are what a person sees besides the text (images, resources; see ResultPart).
    """

    content: str
    status: OutcomeStatus = "ok"
    parts: tuple[ResultPart, ...] = ()

    @classmethod
    def error(cls, message: str) -> ToolOutcome:
        return cls(message, "error")


class ToolError(Exception):
    """Raised by a tool handler for an expected failure; the message goes to the model."""


ToolHandler = Callable[[dict[str, Any]], Awaitable[ToolOutcome]]


class ToolRunner(Protocol):
    """Runs one call whose JSON arguments already parsed to an object."""

    def knows(self, name: str) -> bool: ...

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        """Run the tool. Cancellation (asyncio.CancelledError) must stop it promptly."""
        ...


class ToolInContext(Protocol):
    """A tool that runs in a context (melgui.core.protocol.tools.definition.Tool is one)."""

    @property
    def name(self) -> str: ...

    async def run(self, context: Any, arguments: dict[str, Any]) -> ToolOutcome: ...


class ToolRegistry:
    """A ToolRunner: built-in tools, each with where it finds its context, and plain
    handlers by name (an MCP server's tools)."""

    def __init__(self, handlers: dict[str, ToolHandler] | None = None) -> None:
        self._handlers: dict[str, ToolHandler] = dict(handlers or {})
        self._tools: dict[str, tuple[ToolInContext, Callable[[], Any]]] = {}

    def register(self, name: str, handler: ToolHandler) -> None:
        self._tools.pop(name, None)
        self._handlers[name] = handler

    def add(self, tool: ToolInContext, context: Callable[[], Any]) -> None:
        """`tool` runs in whatever `context()` gives at the time of each call (a desk's
        current workspace and settings)."""
        self._handlers.pop(tool.name, None)
        self._tools[tool.name] = (tool, context)

    def knows(self, name: str) -> bool:
        return name in self._handlers or name in self._tools

    def names(self) -> list[str]:
        return sorted([*self._handlers, *self._tools])

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        try:
            if name in self._tools:
                tool, context = self._tools[name]
                return await tool.run(context(), arguments)
            handler = self._handlers.get(name)
            if handler is None:
                return ToolOutcome.error(f"Unknown tool {name!r}.")
            return await handler(arguments)
        except ToolError as exc:
            return ToolOutcome.error(str(exc))


# The call a handler runs for, as (source, call id, tool name); the loop sets it around a
# tool's run, so a tool that hears back later (an MCP server asking for input, reporting
# progress) can say which call it is about.
RUNNING_CALL: ContextVar[tuple[str, str, str] | None] = ContextVar("running_call", default=None)
