"""The person's view of a compacted conversation: which originals a summary stands for,
through a second compaction, an edited summary and a rewind; melgui's notes left out."""

from __future__ import annotations

from melgui.core.protocol.messages import Message
from melgui.core.protocol.views.compacted import (
    SUMMARY_ACK,
    SUMMARY_HEAD,
    persons_words,
    summarised,
)


def summary(text: str) -> list[Message]:
    return [Message.user(SUMMARY_HEAD + text), Message.assistant(SUMMARY_ACK)]


def test_a_summary_stands_for_the_messages_it_replaced_even_twice() -> None:
    system = Message.system("rules")
    old = [Message.user("one"), Message.assistant("first"), Message.user("two")]
    tail = [Message.user("three"), Message.assistant("third")]
    once = [system, *summary("s1"), *tail]
    first = summarised([system, *old, *tail], once)
    assert [m.content for m in first] == ["one", "first", "two"]
    more = [Message.user("four"), Message.assistant("fourth")]
    twice = [system, *summary("s2"), *more]
    second = summarised([*once, *more], twice, first)
    assert [m.content for m in second] == ["one", "first", "two", "three", "third"]
    edited = [system, *summary("s2, edited"), *more]
    assert summarised(twice, edited, second) == second
    rewound = twice[:-1]
    assert summarised(twice, rewound, second) == second
    assert summarised(twice, [system, Message.user("fresh")], second) == []


def test_the_persons_words_leave_out_melgui_s_note_for_the_model() -> None:
    assert persons_words("[melgui] The person rewound this.\n\nGo on") == "Go on"
    assert persons_words("Plain words [melgui] inside") == "Plain words [melgui] inside"
