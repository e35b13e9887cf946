"""Plan mode: a conversation reads and plans, and changes nothing until its plan is approved.

While it is on, a leg offers the model only the tools that change nothing (the read-only
tools, `write_plan` among them, and `pin_fact`, which writes only the conversation), and
a call to any other tool is refused by its judgement (source "plan mode") with a reason
the model can act on; hiding the tools is not the guard, the refusal is. It is per
conversation: each session's loop has its own.
"""

from __future__ import annotations

from collections.abc import Callable

from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.judgement import Judgement, denied

SOURCE = "plan mode"
REFUSAL = (
    "plan mode is on: only tools that read run until the person approves a plan. "
    "Write the plan with write_plan and wait for approval"
)


class PlanMode:
    """Whether a conversation plans; `subscribe` hears each change (the recording keeps
    it with the conversation, the toolbar shows it)."""

    def __init__(self, on: bool = False) -> None:
        self._on = on
        self._listeners: list[Callable[[bool], None]] = []

    @property
    def on(self) -> bool:
        return self._on

    @on.setter
    def on(self, value: bool) -> None:
        if value == self._on:
            return
        self._on = value
        for listener in list(self._listeners):
            listener(value)

    def subscribe(self, listener: Callable[[bool], None]) -> Callable[[], None]:
        """Call `listener(on)` on each change; returns a function that stops it."""
        self._listeners.append(listener)

        def unsubscribe() -> None:
            if listener in self._listeners:
                self._listeners.remove(listener)

        return unsubscribe

    def offered(self, tools: tuple[ToolDef, ...]) -> tuple[ToolDef, ...]:
        """The tools a leg offers: all of them, or while planning only the read-only ones."""
        return tuple(t for t in tools if t.changes_nothing_outside) if self.on else tools

    def refusal(self, tool: ToolDef | None) -> Judgement | None:
        """The judgement refusing a call while planning; None when the call may go on."""
        if not self.on or (tool is not None and tool.changes_nothing_outside):
            return None
        name = tool.name if tool is not None else "this tool"
        return denied(SOURCE, f"{name} changes things and {REFUSAL}")
