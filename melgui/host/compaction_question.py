"""The preview before a compaction, as a question that waits in the host: what the host
sends of it (the `compaction` record: the items a view's dialog lists, with their fates
and tokens), and the view's copy of it, a CompactionQuestion like the window's own, whose
answer goes back as `compaction/answer`.

    record = compaction_record(question_id, question)      # host: logged, in snapshots
    copy = question_from_json(record["question"])          # view: shown by the dialog
"""

from __future__ import annotations

from typing import Any, cast

from melgui.core.agent.compaction import Plan, Proposed
from melgui.core.context.preview import CompactionQuestion, Fate, Item
from melgui.host.changes import Record


def compaction_record(question_id: str, question: CompactionQuestion) -> Record:
    """A compaction waiting for a person: everything the preview shows, nothing of the
    messages themselves (a view has them; the labels say which)."""
    proposed = question.proposed
    return {
        "type": "compaction",
        "id": question_id,
        "question": {
            "mode": proposed.mode,
            "summarise": proposed.summarise,
            "elided": sorted(proposed.elided),
            "pins": list(proposed.pins),
            "chars_per_token": proposed.chars_per_token,
            "before": proposed.before,
            "kept_tokens": question.kept_tokens,
            "items": [[i.index, i.label, i.tokens, i.fate] for i in question.items],
        },
    }


def question_from_json(data: dict[str, Any]) -> CompactionQuestion:
    """A view's copy of the host's question (its plan's messages are not sent: the dialog
    reads the items). Needs a running asyncio loop, for its future."""
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


def keep_of(given: Any) -> frozenset[int] | None:
    """`compaction/answer`'s `keep`: the items kept word for word, or None (don't compact).
    Raises ValueError for anything else."""
    if given is None:
        return None
    if not isinstance(given, list) or not all(isinstance(i, int) for i in given):
        raise ValueError(f"keep is a list of item numbers or null, not {given!r}")
    return frozenset(given)
