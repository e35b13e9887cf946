"""What one leg may stream before melgui stops reading it: a cap per kind of content.

A server that never ends a leg (or a model caught in a loop) would otherwise grow the
answer, the reasoning or a call's arguments until the machine runs out of memory. Past a
cap the leg fails with a message that says which cap; what arrived before stays in the
conversation, and no call of the leg runs. The caps sit far above any real answer: a
leg of 16 M characters is some four million tokens.

The embedded engine's legs do not come through here: each of its completions asks
llama.cpp for at most ANSWER_TOKENS or CALL_TOKENS tokens (`local/generation.py`), which
bounds a leg far lower.
"""

from __future__ import annotations

from dataclasses import dataclass

from melgui.core.protocol.events import ReasoningDelta, StreamEvent, TextDelta, ToolCalls
from melgui.core.transports.http.sse import describe_size

MAX_LEG_TEXT = 16 * 1024 * 1024  # characters of the answer
MAX_LEG_REASONING = 16 * 1024 * 1024  # characters of reasoning
MAX_LEG_PIECES = 1_000_000  # text and reasoning deltas: each costs memory beyond its text
MAX_LEG_ARGUMENTS = 32 * 1024 * 1024  # characters of all the leg's tool-call arguments


@dataclass(frozen=True, slots=True)
class LegLimits:
    text: int = MAX_LEG_TEXT
    reasoning: int = MAX_LEG_REASONING
    pieces: int = MAX_LEG_PIECES
    arguments: int = MAX_LEG_ARGUMENTS


class LegTooLarge(ValueError):
    """The leg passed one of its caps; the message names it."""


def too_much(what: str, limit: int) -> LegTooLarge:
    return LegTooLarge(
        f"the model's {what} in this leg passed {describe_size(limit)}; melgui stopped "
        "reading the stream"
    )


_DELTAS = (TextDelta, ReasoningDelta)  # a tuple: `A | B` in the call is built per event


class LegBudget:
    """Counts a leg's events against its limits; `count` raises LegTooLarge past one."""

    def __init__(self, limits: LegLimits | None = None) -> None:
        self.limits = limits or LegLimits()
        self.text = 0
        self.reasoning = 0
        self.pieces = 0

    def count(self, event: StreamEvent) -> None:
        limits = self.limits
        if isinstance(event, _DELTAS):
            self.pieces += 1
            if self.pieces > limits.pieces:
                raise LegTooLarge(
                    f"the model's answer in this leg came in more than {limits.pieces:,} "
                    "pieces; melgui stopped reading the stream"
                )
            if isinstance(event, TextDelta):
                self.text += len(event.text)
                if self.text > limits.text:
                    raise too_much("answer text", limits.text)
            else:
                self.reasoning += len(event.text)
                if self.reasoning > limits.reasoning:
                    raise too_much("reasoning", limits.reasoning)
        elif isinstance(event, ToolCalls):
            size = sum(len(call.arguments) for call in event.calls)
            if size > limits.arguments:
                raise too_much("tool-call arguments", limits.arguments)
