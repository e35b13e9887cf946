"""Reopening with what a worker thread already read: resume and the journal read none of
it again through the store's own connection, and end exactly as a reopening that reads
everything itself."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Message
from melgui.core.store import Store
from melgui.core.store.database import open_database
from melgui.core.store.journal import Journal
from melgui.core.store.resume import (
    ConversationNotFoundError,
    Resumed,
    calls_from_file,
    resume,
    stored_from_file,
)
from melgui.core.thread.changes import EntryAdded
from melgui.core.thread.entries import UserEntry

READS = ("FROM messages", "FROM tool_calls", "FROM plans", "FROM notes")


class TracedStore:
    """A real store on a file, its connection's statements kept (reads only)."""

    def __init__(self, path: Path) -> None:
        opened = open_database(path)
        self.statements: list[str] = []
        opened.conn.set_trace_callback(self.statements.append)
        ticks = itertools.count(1000)
        self.store = Store(opened, clock=lambda: float(next(ticks)))
        self.path = path

    def reads(self) -> list[str]:
        return [s for s in self.statements if s.lstrip().startswith("SELECT") and _reads(s)]


def _reads(statement: str) -> bool:
    return any(table in statement for table in READS)


@pytest.fixture
def traced(tmp_path: Path) -> Iterator[TracedStore]:
    made = TracedStore(tmp_path / "history.sqlite3")
    yield made
    made.store.close()


@pytest.fixture
def twin(tmp_path: Path) -> Iterator[TracedStore]:
    made = TracedStore(tmp_path / "twin.sqlite3")
    yield made
    made.store.close()


def intact(store: Store, folder: str, cid: str | None = None) -> str:
    """Two turns with calls, their records, a plan, a retry and an error in between."""
    cid = store.create_conversation(folder, conversation_id=cid)
    seq = itertools.count()
    for turn in range(2):
        call = ToolCall(f"c{turn}", "read_file", f'{{"path": "m{turn}.py"}}')
        store.put_message(cid, next(seq), Message.user(f"question {turn}"))
        store.put_message(cid, next(seq), Message.assistant("Looking.", (call,)))
        store.calls.requested(cid, call)
        store.calls.decided(cid, call.id, "auto")
        store.calls.finished(cid, call.id, "ok", "x = 1", 0.25)
        store.put_message(cid, next(seq), Message.tool_result(call.id, "x = 1"))
        store.add_note(cid, "retry", "attempt 2 after: busy")
        store.put_message(cid, next(seq), Message.assistant(f"answer {turn}"))
    store.add_plan(cid, "Plan", "1. read")
    store.add_note(cid, "error", "the server went away")
    return cid


def crashed(store: Store, folder: str, cid: str | None = None) -> str:
    """A call left running and a partial answer: both repaired on reopening."""
    cid = intact(store, folder, cid)
    call = ToolCall("open", "run_command", '{"command": "make"}')
    store.put_message(cid, 8, Message.assistant("Building.", (call,)))
    store.calls.requested(cid, call)
    store.calls.phase(cid, "open", "running")
    return cid


def same(one: Resumed, other: Resumed) -> None:
    assert one.conversation.messages == other.conversation.messages
    assert (one.repair, one.cut_text) == (other.repair, other.cut_text)
    assert one.describe() == other.describe()
    assert one.tool_calls == other.tool_calls
    assert one.plans == other.plans
    assert one.notes == other.notes
    assert one.failures == other.failures
    assert one.summary == other.summary


def test_resuming_what_was_read_reads_nothing_again(traced: TracedStore, twin: TracedStore) -> None:
    cid = intact(traced.store, "/p")
    intact(twin.store, "/p", cid)
    read = stored_from_file(traced.path, cid)  # what the reader thread does
    traced.statements.clear()

    resumed = resume(traced.store, cid, read)

    assert traced.reads() == []
    same(resumed, resume(twin.store, cid))
    assert [position for position, _ in resumed.failures] == [3, 7, 8]


def test_a_repair_reads_back_only_what_it_changed(traced: TracedStore, twin: TracedStore) -> None:
    cid = crashed(traced.store, "/p")
    crashed(twin.store, "/p", cid)
    read = stored_from_file(traced.path, cid)
    traced.statements.clear()

    resumed = resume(traced.store, cid, read)

    assert resumed.repaired and resumed.conversation.messages[-1].status == "interrupted"
    assert not [s for s in traced.reads() if "content" in s]  # no message decoded again
    same(resumed, resume(twin.store, cid))
    assert [s.message for s in traced.store.messages(cid)] == resumed.conversation.messages


def test_a_first_read_holds_only_the_calls_a_first_paint_needs(traced: TracedStore) -> None:
    """The reader thread's read for showing a conversation: of its calls' records, those
    with hook runs or notes (their cards show them); every record is read after."""
    cid = intact(traced.store, "/p")
    traced.store.calls.steps(cid, "c1", (), ("m1.py:1: unused import",))
    read = stored_from_file(traced.path, cid, all_calls=False)

    resumed = resume(traced.store, cid, read)

    assert resumed.calls_later and not resume(traced.store, cid).calls_later
    assert [(r.call_id, r.notes) for r in resumed.tool_calls] == [
        ("c1", ("m1.py:1: unused import",))
    ]
    assert calls_from_file(traced.path, cid) == traced.store.calls.of(cid)


def test_a_first_read_repairs_as_a_whole_one(traced: TracedStore, twin: TracedStore) -> None:
    """The call a crash left open is in the first read: repaired as a read of every record
    repairs it, and its record finished (then every record is read at once)."""
    cid = crashed(traced.store, "/p")
    crashed(twin.store, "/p", cid)
    read = stored_from_file(traced.path, cid, all_calls=False)
    assert [r.call_id for r in read.tool_calls] == ["open"]

    resumed = resume(traced.store, cid, read)

    assert not resumed.calls_later
    same(resumed, resume(twin.store, cid))


def test_a_conversation_purged_since_it_was_read_is_not_found(traced: TracedStore) -> None:
    cid = intact(traced.store, "/p")
    read = stored_from_file(traced.path, cid)
    traced.store.delete(cid)
    traced.store.purge_deleted(older_than=-1e9)
    with pytest.raises(ConversationNotFoundError):
        resume(traced.store, cid, read)
    with pytest.raises(ConversationNotFoundError):
        stored_from_file(traced.path, cid)


def test_a_journal_told_what_is_stored_reads_nothing_and_goes_on(traced: TracedStore) -> None:
    cid = crashed(traced.store, "/p")
    resumed = resume(traced.store, cid, stored_from_file(traced.path, cid))
    traced.statements.clear()

    journal = Journal(traced.store, cid, resumed.conversation, stored=resumed.conversation.messages)
    # Only the rows' count is checked: nothing decoded, nothing rewritten.
    assert [s for s in traced.statements if "messages" in s] == [
        f"SELECT COUNT(*) FROM messages WHERE conversation_id = '{cid}'"
    ]

    journal.hear(EntryAdded(1, 0, UserEntry("e1", Message.user("go on"))))
    journal.close()
    stored = [s.message for s in traced.store.messages(cid)]
    assert stored == [*resumed.conversation.messages, Message.user("go on")]


def test_rows_added_since_they_were_read_are_read_again(traced: TracedStore) -> None:
    """A journal still ending its turn wrote after the read: the new one sees it and
    makes the store hold its own conversation, as a journal told nothing would."""
    cid = intact(traced.store, "/p")
    resumed = resume(traced.store, cid, stored_from_file(traced.path, cid))
    traced.store.put_message(cid, 8, Message.assistant("late"))  # the old journal, after

    Journal(traced.store, cid, resumed.conversation, stored=resumed.conversation.messages)

    assert [s.message for s in traced.store.messages(cid)] == resumed.conversation.messages
