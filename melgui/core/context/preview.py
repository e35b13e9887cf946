"""Before a compaction runs, what it would cut and keep, item by item, as a question with a
future: the window shows it, the person keeps items or cancels, and the compaction
(`Compactor.review`) goes on with the answer.

An item is one message of the older part: the model summarises it (or, when eliding the
large results is enough, only those are cut to their head and tail), unless the person
keeps it, which puts it word for word in the next request. What is always kept (the
instructions, the last two requests and what followed, the pinned facts) is counted as
such.

A question that waits in the melgui host travels as JSON (`question_to_json`): a view's
copy (`question_from_json`) has the items, not the messages, which the dialog does not read.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, cast

from melgui.core.agent.context import message_chars
from melgui.core.context.labels import calls_by_id, message_label
from melgui.core.protocol.catalog import ToolDef
from melgui.core.protocol.views.compacted import Plan, Proposed

Fate = Literal["summarised", "elided", "kept"]


@dataclass(frozen=True, slots=True)
class Item:
    index: int  # in the older part (`Proposed.plan.old`)
    label: str
    tokens: int
    fate: Fate  # what happens to it unless the person keeps it

    @property
    def keepable(self) -> bool:
        return self.fate != "kept"


@dataclass(eq=False)
class CompactionQuestion:
    """A compaction waiting for a person: `keep(indexes)` runs it keeping those items word
    for word, `cancel()` leaves the conversation as it is. Answered once."""

    proposed: Proposed
    items: tuple[Item, ...]
    kept_tokens: int  # the rest of the request (instructions, tools, recent turns), kept
    future: asyncio.Future[frozenset[int] | None] = field(
        default_factory=lambda: asyncio.get_running_loop().create_future()
    )

    @property
    def pending(self) -> bool:
        return not self.future.done()

    @property
    def cut_tokens(self) -> int:
        return sum(i.tokens for i in self.items if i.keepable)

    def keep(self, indexes: Iterable[int] = ()) -> None:
        if self.pending:
            self.future.set_result(frozenset(indexes))

    def cancel(self) -> None:
        if self.pending:
            self.future.set_result(None)


def question_for(
    proposed: Proposed, tools: Mapping[str, ToolDef] | None = None
) -> CompactionQuestion:
    """The items of `proposed`, each with its fate and its tokens (the estimate's ratio)."""
    plan = proposed.plan
    every = [*plan.prefix, *plan.old, *plan.tail]
    calls = calls_by_id(every)
    ratio = proposed.chars_per_token
    items: list[Item] = []
    for index, message in enumerate(plan.old):
        fate: Fate = "summarised" if proposed.summarise else "kept"
        if not proposed.summarise and index in proposed.elided:
            fate = "elided"
        label = message_label(message, calls, tools or {})
        items.append(Item(index, label, round(message_chars(message) / ratio), fate))
    cut = sum(i.tokens for i in items if i.keepable)
    return CompactionQuestion(proposed, tuple(items), max(proposed.before - cut, 0))


def question_to_json(question: CompactionQuestion) -> dict[str, Any]:
    """What the preview shows of a question: its proposal's facts and its items."""
    proposed = question.proposed
    return {
        "mode": proposed.mode,
        "summarise": proposed.summarise,
        "elided": sorted(proposed.elided),
        "pins": list(proposed.pins),
        "chars_per_token": proposed.chars_per_token,
        "before": proposed.before,
        "kept_tokens": question.kept_tokens,
        "items": [[i.index, i.label, i.tokens, i.fate] for i in question.items],
    }


def question_from_json(data: dict[str, Any]) -> CompactionQuestion:
    """A copy of a question asked elsewhere, with no messages in its plan (the dialog reads
    the items). Needs a running asyncio loop, for its future."""
    proposed = Proposed(
        Plan([], [], []),
        "manual" if data.get("mode") == "manual" else "auto",
        bool(data.get("summarise")),
        frozenset(int(i) for i in data.get("elided", [])),
        tuple(str(p) for p in data.get("pins", [])),
        float(data.get("chars_per_token") or 4.0),
        int(data.get("before", 0)),
    )
    items = tuple(
        Item(int(index), str(label), int(tokens), cast(Fate, fate))
        for index, label, tokens, fate in data.get("items", [])
    )
    return CompactionQuestion(proposed, items, int(data.get("kept_tokens", 0)))


def keep_from_json(given: Any) -> frozenset[int] | None:
    """An answer as JSON: the items kept word for word, or null (don't compact). Raises
    ValueError for anything else."""
    if given is None:
        return None
    if not isinstance(given, list) or not all(isinstance(i, int) for i in given):
        raise ValueError(f"keep is a list of item numbers or null, not {given!r}")
    return frozenset(given)
