"""write_plan: the plan goes to whoever shows plans (the Plans panel, a test's list)."""

from __future__ import annotations

import inspect
from dataclasses import dataclass

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.definition import Tool
from melgui.core.protocol.tools.plans import WRITE_PLAN
from melgui.tools.context import PlanSink, ToolContext

__all__ = ["WRITE_PLAN_TOOL", "PlanSink", "WritePlanInput", "write_plan"]


@dataclass(frozen=True, slots=True)
class WritePlanInput:
    title: str
    markdown: str

    def __post_init__(self) -> None:
        if not self.title.strip():
            raise ToolError("Argument 'title' is empty; give the plan a short title.")


async def write_plan(context: ToolContext, given: WritePlanInput) -> ToolOutcome:
    if context.plans is None:
        raise ToolError("write_plan is not available here: nothing shows plans.")
    title, markdown = given.title.strip(), given.markdown
    result = context.plans(title, markdown)
    if inspect.isawaitable(result):
        await result
    lines = markdown.count("\n") + (1 if markdown and not markdown.endswith("\n") else 0)
    return ToolOutcome(f"Plan {title!r} is shown to the person in the Plans panel ({lines} lines).")


WRITE_PLAN_TOOL = Tool(WRITE_PLAN, WritePlanInput, write_plan)
