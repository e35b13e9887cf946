"""A session's numbered changes: merged within a frame, numbered once, read back after any
number from memory or, once memory let go of it, from the journal."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.thread.changes import TextAppended
from melgui.host.change_journal import ChangeJournal
from melgui.host.changes import ChangeLog, SequenceAhead
from melgui.host.records import change_record, merge_records


@pytest.fixture
def journal(tmp_path: Path) -> Iterator[ChangeJournal]:
    opened = ChangeJournal(tmp_path / "host.sqlite")
    yield opened
    opened.close()


def test_a_frame_of_deltas_is_one_numbered_record(journal: ChangeJournal) -> None:
    log = ChangeLog("s", journal, merge=merge_records)
    pieces = [(0, "He", False), (0, "l", False), (0, "lo", False), (1, "hm", True), (0, "!", False)]
    for seq, (index, piece, reasoning) in enumerate(pieces, start=1):
        log.add(change_record(TextAppended(seq, index, piece, reasoning)))
    batch = log.flush()
    assert [(r["seq"], r.get("first"), r["change"]["seq"]) for r in batch] == [
        (1, 1, 3),
        (2, None, 4),
        (3, None, 5),
    ]
    assert [r["change"]["text"] for r in batch] == ["Hello", "hm", "!"]
    assert log.flush() == []


def test_missed_changes_come_from_memory_then_from_the_journal(journal: ChangeJournal) -> None:
    log = ChangeLog("s", journal, keep=3)
    for n in range(10):
        log.add({"type": "call", "id": str(n)})
        log.flush()
    assert log.in_memory() == 3
    assert [r["seq"] for r in log.since(8)] == [9, 10]  # memory
    assert [r["seq"] for r in log.since(2)] == list(range(3, 11))  # journal
    assert log.since(10) == []
    with pytest.raises(SequenceAhead):
        log.since(11)


def test_numbers_go_on_after_a_new_log_on_the_same_journal(journal: ChangeJournal) -> None:
    first = ChangeLog("s", journal)
    first.add({"type": "prompt", "text": "a"})
    first.flush()
    again = ChangeLog("s", journal)
    again.add({"type": "interrupted", "text": "cut"})
    assert again.flush()[0]["seq"] == 2
    assert [r["type"] for r in again.since(0)] == ["prompt", "interrupted"]
    assert ChangeLog("other", journal).last_seq == 0
