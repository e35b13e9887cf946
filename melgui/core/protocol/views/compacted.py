"""The person's view of a compacted conversation, beside the model's.

The model is sent the summary as a user message and an "Understood…" answer in place of
the older part, and notes melgui writes for it start the next user message
("[melgui] The person rewound…"). The person reads the original messages instead (the
window dims them above a "Compacted here" divider that opens the summary) and their own
words without melgui's notes. This module says which messages those are, and how the
summary message reads (what compaction writes, what the window finds and edits), and
what a compaction proposes for the person to review first (`Proposed`); it draws
nothing and compacts nothing (core.agent.compaction does).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass
from typing import Literal

from melgui.core.protocol.messages import Message

SUMMARY_HEAD = (
    "[Summary of the earlier conversation, written by the model at compaction. "
    "The original messages are kept in melgui's history.]\n\n"
)
SUMMARY_ACK = "Understood. I continue from this summary."
# What melgui itself writes after the model's summary, word for word: the items a person
# kept at this compaction, then the pinned facts (every compaction writes them again).
KEPT_HEAD = "\n\n## Kept as they were at this compaction\n\n"
PINNED_HEAD = "\n\n## Pinned facts (kept word for word at every compaction)\n\n"

NOTE_MARK = "[melgui] "  # how a note for the model opens a user message (session.preface)


def is_summary_ack(message: Message) -> bool:
    """The answer compaction writes after the summary (never the model's own words)."""
    return message.role == "assistant" and message.content == SUMMARY_ACK and not message.tool_calls


def persons_words(text: str) -> str:
    """A user message as the person wrote it: a note melgui put first for the model is left out."""
    if not text.startswith(NOTE_MARK):
        return text
    _note, _gap, words = text.partition("\n\n")
    return words


def summarised(
    before: Sequence[Message], after: Sequence[Message], earlier: Sequence[Message] = ()
) -> list[Message]:
    """The original messages the summary in `after` stands for, whole.

    `before` is the list compaction replaced, `after` the list it made (kept system
    messages, the summary, its answer, the kept tail). An older summary inside `before`
    stands for `earlier`, the originals of the compaction before. No summary in `after`:
    `earlier` again when its summary is still there, else nothing.
    """
    at = next((i for i, m in enumerate(after) if is_summary(m)), None)
    if at is None:
        return []
    kept_from = at + 2 if at + 1 < len(after) and is_summary_ack(after[at + 1]) else at + 1
    tail = len(after) - kept_from
    if any(m == after[at] for m in before):  # the same summary: a rewind, a retry
        return list(earlier)
    start = 0
    while start < len(before) and before[start].role == "system":
        start += 1
    part = before[start : len(before) - tail]
    out: list[Message] = []
    for message in part:
        if is_summary(message):
            out.extend(earlier)
        elif not is_summary_ack(message):
            out.append(message)
    return out


def is_summary(message: Message) -> bool:
    return message.role == "user" and message.content.startswith(SUMMARY_HEAD)


def with_summary(messages: Sequence[Message], text: str) -> list[Message]:
    """`messages` with the compaction summary's text replaced (the chat's edit); the pinned
    facts after it stay as they are."""
    out = list(messages)
    for index, message in enumerate(out):
        if is_summary(message):
            _summary, head, pins = message.content.partition(PINNED_HEAD)
            out[index] = Message.user(SUMMARY_HEAD + text.strip() + head + pins)
            return out
    raise ValueError("this conversation has no compaction summary")


def summary_text(messages: Sequence[Message]) -> str | None:
    """The summary as the person edits it: without the pinned facts melgui writes after it."""
    for message in messages:
        if is_summary(message):
            return message.content[len(SUMMARY_HEAD) :].partition(PINNED_HEAD)[0]
    return None


# A compaction asked for by the person (the Compact button, /compact) or made before a
# leg that would not fit.
Mode = Literal["manual", "auto"]


@dataclass(frozen=True, slots=True)
class Plan:
    """Where the conversation splits: kept system messages, the older part, the tail."""

    prefix: list[Message]
    old: list[Message]
    tail: list[Message]


@dataclass(frozen=True, slots=True)
class Proposed:
    """What a compaction is about to do, for a person to review first (`Compactor.review`):
    `summarise` the older part (`plan.old`), or only elide the large results at `elided`
    (indexes into `plan.old`); `pins` are written after the summary either way."""

    plan: Plan
    mode: Mode
    summarise: bool
    elided: frozenset[int]
    pins: tuple[str, ...]
    chars_per_token: float
    before: int  # tokens the next request takes now


# A person's answer to a Proposed: the indexes of `plan.old` to keep as they are (in the
# next request, word for word), or None: do not compact now.
Review = Callable[[Proposed], Awaitable[frozenset[int] | None]]
