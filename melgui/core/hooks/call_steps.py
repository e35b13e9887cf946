"""The steps around one call the loop runs: the hooks before it, and after it the hooks
and any step that reads what the call did (the language server's diagnostics after an
edit). Each step after a call labels the text it adds to the result."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol, runtime_checkable

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import AfterCall, BeforeCall, CallHooks


@runtime_checkable
class AfterStep(Protocol):
    tools: frozenset[str]  # the tools whose calls it reads after; the others skip it

    async def after_call(
        self, call: ToolCall, arguments: dict[str, Any], status: str, content: str
    ) -> AfterCall: ...


class CallSteps:
    def __init__(self, hooks: CallHooks | None, after: Sequence[AfterStep] = ()) -> None:
        self.hooks = hooks
        self.after = list(after)

    async def before_call(self, call: ToolCall, arguments: dict[str, Any]) -> BeforeCall:
        if self.hooks is None:
            return BeforeCall()
        return await self.hooks.before_call(call, arguments)

    async def permission_request(self, call: ToolCall, arguments: dict[str, Any]) -> BeforeCall:
        if self.hooks is None:
            return BeforeCall()
        return await self.hooks.permission_request(call, arguments)

    async def after_call(
        self, call: ToolCall, arguments: dict[str, Any], status: str, content: str
    ) -> AfterCall:
        steps: list[CallHooks | AfterStep] = [self.hooks] if self.hooks is not None else []
        steps += [step for step in self.after if call.name in step.tools]
        results = [await step.after_call(call, arguments, status, content) for step in steps]
        return AfterCall(
            "\n\n".join(r.context for r in results if r.context),
            tuple(run for r in results for run in r.runs),
            tuple(note for r in results for note in r.notes),
        )
