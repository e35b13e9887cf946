"""Where to cut a page of history for drawing it end first (no Qt here).

The chat view draws the messages that fill the first screen at once, then the rest of
the page in chunks, each drawn in above the previous one. A chunk never starts between a
call and its results, and starts in the state an in-order drawing would be in there
(whether an "Assistant" header is already above), so the result is the same.
"""

from __future__ import annotations

from collections.abc import Collection, Sequence

from melgui.core.protocol.messages import Message

FIRST_SCREEN_CHARS = 3_000  # about a screenful of text, drawn before the first paint
FIRST_SCREEN_MESSAGES = 12
CHUNK_CHARS = 2_000  # earlier messages drawn in at once: about one slice of work
CHUNK_MESSAGES = 8
CALL_CHARS = 200  # what a tool card weighs, in characters of text


def weight(message: Message) -> int:
    """About how much drawing a message takes, in characters of text."""
    if message.role == "tool":
        return 0  # only its call's card changes
    return len(message.content) + len(message.reasoning) + CALL_CHARS * len(message.tool_calls)


def first_screen_start(messages: Sequence[Message], start: int) -> int:
    """The first message drawn at once when the page [start, end) opens at its end."""
    first, drawn, count = len(messages), 0, 0
    while first > start and drawn < FIRST_SCREEN_CHARS and count < FIRST_SCREEN_MESSAGES:
        first -= 1
        drawn += weight(messages[first])
        count += messages[first].role != "tool"
    return _cut_before(messages, start, first)


def chunk_starts(messages: Sequence[Message], start: int, end: int) -> list[tuple[int, int]]:
    """[first, last) ranges covering [start, end) in order, each about one slice of work."""
    chunks: list[tuple[int, int]] = []
    last = end
    while last > start:
        first, drawn, count = last, 0, 0
        while first > start and drawn < CHUNK_CHARS and count < CHUNK_MESSAGES:
            first -= 1
            drawn += weight(messages[first])
            count += messages[first].role != "tool"
        first = _cut_before(messages, start, first)
        if first >= last:  # a call with more results than a chunk holds: take it whole
            first = _cut_before(messages, start, last - 1)
        chunks.append((first, last))
        last = first
    chunks.reverse()
    return chunks


def speaker_before(
    messages: Sequence[Message], start: int, index: int, failures_at: Collection[int]
) -> str:
    """Who spoke last when an in-order drawing of the page from `start` reaches message
    `index`: "Assistant" (its header is already above), "You", or "" (a notice, or
    nothing yet)."""
    for position in range(index - 1, start - 1, -1):
        message = messages[position]
        if message.role == "user":
            return "You"
        if message.role == "system":
            return ""
        if message.role == "assistant" and (
            message.reasoning.strip() or message.content.strip() or message.tool_calls
        ):
            return "Assistant"
        if position in failures_at:  # drawn before the message: a notice
            return ""
    return ""


def _cut_before(messages: Sequence[Message], start: int, index: int) -> int:
    """`index`, or the message before it whose results it is (never below `start`)."""
    while index > start and messages[index].role == "tool":
        index -= 1
    return index
