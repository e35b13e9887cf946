"""pin_fact: the model pins a fact this conversation keeps word for word at every
compaction. The call reads nothing and changes nothing here: the conversation's thread
takes the pin from the call's result (its reducer), as it takes a plan from write_plan."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from melgui.core.protocol.tooling import ToolError, ToolOutcome, ToolRegistry
from melgui.core.protocol.tools.definition import decode_input
from melgui.core.protocol.tools.pins import PIN_FACT, PIN_LIMIT

__all__ = ["PIN_FACT", "PinInput", "add_pin_tool", "pin_fact"]


@dataclass(frozen=True, slots=True)
class PinInput:
    fact: str

    def __post_init__(self) -> None:
        if not self.fact.strip():
            raise ToolError("Argument 'fact' is empty; pin one fact, in a sentence.")
        if len(self.fact) > PIN_LIMIT:
            raise ToolError(
                f"A pinned fact is at most {PIN_LIMIT} characters ({len(self.fact)} given): "
                "pin the fact itself, not a document."
            )


async def pin_fact(arguments: dict[str, Any]) -> ToolOutcome:
    given = decode_input(PIN_FACT, PinInput, arguments)
    return ToolOutcome(
        f"Pinned: “{given.fact.strip()}”. It is kept word for word at every compaction; "
        "the person sees it in the context meter's list and can unpin it."
    )


def add_pin_tool(registry: ToolRegistry) -> None:
    registry.register(PIN_FACT.name, pin_fact)
