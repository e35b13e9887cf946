"""write_plan: the plan goes to whoever shows plans (the Plans panel, a test's list)."""

from __future__ import annotations

import inspect
from collections.abc import Awaitable
from typing import Any, Protocol

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.tools.arguments import require_str


class PlanSink(Protocol):
    """Receives each plan; may be a plain function or a coroutine function."""

    def __call__(self, title: str, markdown: str) -> Awaitable[None] | None: ...


async def write_plan(sink: PlanSink, arguments: dict[str, Any]) -> ToolOutcome:
    title = require_str(arguments, "title").strip()
    markdown = require_str(arguments, "markdown")
    if not title:
        raise ToolError("Argument 'title' is empty; give the plan a short title.")
    result = sink(title, markdown)
    if inspect.isawaitable(result):
        await result
    lines = markdown.count("\n") + (1 if markdown and not markdown.endswith("\n") else 0)
    return ToolOutcome(f"Plan {title!r} is shown to the person in the Plans panel ({lines} lines).")
