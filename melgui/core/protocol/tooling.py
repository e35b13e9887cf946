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


class ToolRegistry:
    """A ToolRunner built from one async handler per tool name."""

    def __init__(self, handlers: dict[str, ToolHandler] | None = None) -> None:
        self._handlers: dict[str, ToolHandler] = dict(handlers or {})

    def register(self, name: str, handler: ToolHandler) -> None:
        self._handlers[name] = handler

    def knows(self, name: str) -> bool:
        return name in self._handlers

    def names(self) -> list[str]:
        return sorted(self._handlers)

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        handler = self._handlers.get(name)
        if handler is None:
            return ToolOutcome.error(f"Unknown tool {name!r}.")
        try:
            return await handler(arguments)
        except ToolError as exc:
            return ToolOutcome.error(str(exc))


# The call a handler runs for, as (source, call id, tool name); the loop sets it around a
# tool's run, so a tool that hears back later (an MCP server asking for input, reporting
# progress) can say which call it is about.
RUNNING_CALL: ContextVar[tuple[str, str, str] | None] = ContextVar("running_call", default=None)
