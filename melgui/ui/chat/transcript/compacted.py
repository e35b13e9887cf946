"""Draws the person's side of a compaction: the original messages, dimmed, and the
"Compacted here" divider whose link opens the summary the model reads instead."""

from __future__ import annotations

from collections.abc import Sequence

from melgui.core.protocol.calls import shorten, summarize
from melgui.core.protocol.messages import Message
from melgui.core.protocol.views.compacted import persons_words
from melgui.ui.chat.transcript.document import ChatTranscript
from melgui.ui.runtime.theme import Colors

SHOWN = 400  # characters of each original message the dimmed view keeps
SUMMARY_LINK = ("act:summary/", "Show the summary")


def draw_compacted(
    transcript: ChatTranscript, originals: Sequence[Message], colors: Colors
) -> None:
    for message in originals:
        for line in _lines(message):
            transcript.add_notice(line, colors.muted)
    count = len([m for m in originals if m.role != "tool"])
    said = f"{count} earlier messages above" if count else "the earlier messages"
    transcript.add_notice(
        f"── Compacted here ── the model reads a summary of {said} from here on",
        colors.muted,
        link=SUMMARY_LINK,
    )


def _lines(message: Message) -> list[str]:
    if message.role == "user":
        return [f"You: {shorten(persons_words(message.content), SHOWN)}"]
    if message.role != "assistant":
        return []  # results show in their call's line; the system message stays with the model
    lines = [f"Assistant: {shorten(message.content, SHOWN)}"] if message.content else []
    for call in message.tool_calls:
        lines.append(f"    {call.name} {summarize(call.name, call.parsed)}")
    return lines
