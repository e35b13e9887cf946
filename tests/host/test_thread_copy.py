"""A view's copy of a host thread: the thread's changes as the host sends them (merged
runs of text included) give the same entries; a gap is refused, a repeat skipped."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.thread.entries import AssistantEntry, ThreadState
from melgui.core.thread.thread import SeqGap, Thread
from melgui.host.change_journal import ChangeJournal
from melgui.host.changes import ChangeLog
from melgui.host.records import change_record, merge_records
from melgui.host.view_events import ThreadCopy


def hosted(tmp_path: Path) -> tuple[Thread, ChangeLog]:
    thread = Thread("t1")
    log = ChangeLog("s1", ChangeJournal(tmp_path / "host.sqlite"), merge=merge_records)
    thread.subscribe(lambda change: log.add(change_record(change)))
    return thread, log


def test_a_copy_fed_merged_runs_reads_as_the_thread(tmp_path: Path) -> None:
    thread, log = hosted(tmp_path)
    copy = ThreadCopy()
    copy.restart(thread.snapshot())
    index = thread.add(AssistantEntry(thread.new_id(), "", streaming=True, leg=1))
    for piece in ("He", "ll", "o"):
        thread.append_text(index, piece)
    thread.set_state(ThreadState(status="running"))
    batch = log.flush()
    assert len(batch) == 3  # added, one merged run of text, the state
    assert batch[1]["first"] == 2 and batch[1]["change"]["seq"] == 4
    for record in batch:
        assert copy.take(record)
    assert copy.seq == thread.seq and list(copy.entries) == list(thread.entries)
    assert copy.state == thread.state
    assert not copy.take(batch[2])  # a repeat (a snapshot overlapping a batch) is skipped

    thread.append_text(index, " there")
    lost = log.flush()
    thread.append_text(index, "!")
    with pytest.raises(SeqGap):
        copy.take(log.flush()[0])
    assert lost and copy.seq == 5

    again = ThreadCopy()
    heard: list[str] = []
    again.subscribe(lambda change: heard.append(change.kind))
    again.restart(thread.snapshot())
    assert heard == ["entries_replaced", "state_changed"]
    assert again.entries[0].text == "Hello there!"  # type: ignore[union-attr]
