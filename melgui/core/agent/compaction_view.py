"""The person's view of a compacted conversation, beside the model's.

The model is sent the summary as a user message and an "Understood…" answer in place of
the older part, and notes melgui writes for it start the next user message
("[melgui] The person rewound…"). The person reads the original messages instead (the
window dims them above a "Compacted here" divider that opens the summary) and their own
words without melgui's notes. This module says which messages those are; it draws nothing.
"""

from __future__ import annotations

import itertools
from collections.abc import Sequence

from melgui.core.agent.compaction import SUMMARY_ACK, is_summary
from melgui.core.protocol.messages import Message
from melgui.core.store import Store

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


def stored_originals(
    store: Store, conversation_id: str, current: Sequence[Message]
) -> list[Message]:
    """`summarised` for a stored conversation: its branches (each the list before a
    replacement) followed, one after another, up to `current`."""
    branches = store.branches(conversation_id)
    lists = [[s.message for s in store.branch_messages(b.id)] for b in branches]
    lists.append(list(current))
    earlier: list[Message] = []
    for before, after in itertools.pairwise(lists):
        earlier = summarised(before, after, earlier)
    return earlier
