"""Writing the history: a failed write changes nothing, a checkpoint leaves the main file
complete, dropped rows, and the start's clean-up of old deletions."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest

from melgui.core.protocol.messages import Message
from melgui.core.store import Store, open_store
from melgui.core.store.reading import ConversationNotFoundError, stored_from_file
from melgui.core.store.store import PURGE_AFTER
from tests.fakes.clocks import FakeClock


def fail_on(store: Store, content: str) -> None:
    """From now on, writing a message with this content fails as a full disk would."""
    with store.transaction() as conn:
        conn.execute(
            "CREATE TEMP TRIGGER fail_write BEFORE INSERT ON messages"
            f" WHEN NEW.content = '{content}' BEGIN SELECT RAISE(ABORT, 'disk full'); END"
        )


def contents(store: Store, cid: str) -> list[str]:
    return [stored.message.content for stored in store.messages(cid)]


def conversation(store: Store, folder: Path, *texts: str) -> str:
    cid = store.create_conversation(str(folder))
    for seq, text in enumerate(texts):
        store.put_message(cid, seq, Message.user(text) if seq % 2 == 0 else Message.assistant(text))
    return cid


def test_a_branch_whose_write_fails_keeps_the_old_list_and_makes_no_branch(
    store: Store, tmp_path: Path
) -> None:
    cid = conversation(store, tmp_path, "question", "answer")
    fail_on(store, "boom")
    with pytest.raises(sqlite3.IntegrityError, match="disk full"):
        store.branch(cid, [Message.user("edited"), Message.assistant("boom")], "edit")
    assert contents(store, cid) == ["question", "answer"]
    assert store.branches(cid) == []
    # The connection is usable afterwards: the failed transaction is gone.
    store.branch(cid, [Message.user("edited")], "edit", "Edited.")
    assert contents(store, cid) == ["edited"]
    (branch,) = store.branches(cid)
    assert [s.message.content for s in store.branch_messages(branch.id)] == [
        "question",
        "answer",
    ]


def test_replacing_messages_is_all_or_nothing(store: Store, tmp_path: Path) -> None:
    cid = conversation(store, tmp_path, "one", "two", "three")
    fail_on(store, "boom")
    with pytest.raises(sqlite3.IntegrityError):
        store.replace_messages(cid, [Message.user("new"), Message.assistant("boom")])
    assert contents(store, cid) == ["one", "two", "three"]
    store.replace_messages(cid, [Message.user("new")])
    assert contents(store, cid) == ["new"]


def test_a_transaction_rolls_back_on_any_exception_and_nested_ones_join_it(
    store: Store, tmp_path: Path
) -> None:
    cid = conversation(store, tmp_path, "kept")
    with pytest.raises(KeyboardInterrupt), store.transaction():
        store.put_message(cid, 1, Message.assistant("lost"))  # a nested transaction
        assert contents(store, cid) == ["kept", "lost"]
        raise KeyboardInterrupt
    assert contents(store, cid) == ["kept"]
    with store.transaction():
        store.put_message(cid, 1, Message.assistant("saved"))
    assert contents(store, cid) == ["kept", "saved"]


def test_after_a_checkpoint_the_main_file_alone_holds_the_history(
    store: Store, tmp_path: Path
) -> None:
    store.checkpoint()  # the new database's tables
    cid = conversation(store, tmp_path, "question", "answer")
    assert store.path is not None
    before = tmp_path / "before.sqlite3"
    shutil.copyfile(store.path, before)  # the writes are still in the -wal file
    store.checkpoint()
    after = tmp_path / "after.sqlite3"
    shutil.copyfile(store.path, after)  # no -wal copied: only what the main file holds
    assert [s.message.content for s in stored_from_file(after, cid).messages] == [
        "question",
        "answer",
    ]
    with pytest.raises(ConversationNotFoundError):  # only in the -wal file then
        stored_from_file(before, cid)


def test_a_checkpoint_never_raises(store: Store, tmp_path: Path) -> None:
    garbage = tmp_path / "garbage.sqlite3"
    garbage.write_bytes(b"this is not a database" * 100)
    store.path = garbage
    store.checkpoint()
    store.path = None  # kept in memory only: nothing to checkpoint
    store.checkpoint()


def test_reading_from_the_file_sees_what_the_store_wrote_and_never_writes(
    store: Store, tmp_path: Path
) -> None:
    cid = conversation(store, tmp_path, "question", "answer")
    assert store.path is not None
    assert stored_from_file(store.path, cid).messages == store.messages(cid)
    with pytest.raises(sqlite3.OperationalError):  # a missing file is not created
        stored_from_file(tmp_path / "missing.sqlite3", cid)
    assert not (tmp_path / "missing.sqlite3").exists()


def test_dropping_messages_removes_that_position_and_every_later_one(
    store: Store, tmp_path: Path
) -> None:
    cid = conversation(store, tmp_path, "0", "1", "2", "3")
    other = conversation(store, tmp_path, "a", "b", "c")
    store.drop_messages_from(cid, 2)
    assert contents(store, cid) == ["0", "1"]
    assert contents(store, other) == ["a", "b", "c"]
    store.drop_messages_from(cid, 5)
    assert contents(store, cid) == ["0", "1"]


def test_opening_the_history_purges_only_deletions_older_than_30_days(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    store = open_store(tmp_path, clock=clock)
    old = store.create_conversation(str(tmp_path))
    store.delete(old)
    clock.advance(2 * 24 * 3600)
    recent = store.create_conversation(str(tmp_path))
    store.delete(recent)
    kept = store.create_conversation(str(tmp_path))
    store.close()

    clock.advance(PURGE_AFTER - 24 * 3600)  # old: deleted 31 days ago, recent: 29
    store = open_store(tmp_path, clock=clock)
    try:
        assert (store.exists(old), store.exists(recent), store.exists(kept)) == (
            False,
            True,
            True,
        )
    finally:
        store.close()


def test_purge_counts_what_it_removed(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    with open_store(tmp_path, clock=clock) as store:
        gone = [store.create_conversation(str(tmp_path)) for _ in range(3)]
        for cid in gone:
            store.delete(cid)
        clock.advance(10.0)
        assert store.purge_deleted(older_than=10.0) == 0  # exactly 10 s is not older
        clock.advance(0.5)
        assert store.purge_deleted(older_than=10.0) == 3
        assert [store.exists(cid) for cid in gone] == [False, False, False]


def test_a_purge_that_fails_at_the_start_does_not_stop_the_start(tmp_path: Path) -> None:
    clock = FakeClock(1_000_000.0)
    with open_store(tmp_path, clock=clock) as store:
        old = store.create_conversation(str(tmp_path))
        store.delete(old)
        assert store.path is not None
        path = store.path
    conn = sqlite3.connect(path)
    conn.execute(  # a purge now fails as a storage error would
        "CREATE TRIGGER keep BEFORE DELETE ON conversations BEGIN SELECT RAISE(ABORT, 'kept'); END"
    )
    conn.commit()
    conn.close()
    clock.advance(PURGE_AFTER + 1)
    with open_store(tmp_path, clock=clock) as store:
        assert store.notice is None and store.exists(old)
        with pytest.raises(sqlite3.IntegrityError, match="kept"):
            store.purge_deleted()


def test_the_history_opens_where_the_data_folder_says_with_its_busy_timeout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MELGUI_DATA_DIR", str(tmp_path / "data"))
    with Store.open(busy_timeout_ms=1234) as store:
        assert store.path == tmp_path / "data" / "history.sqlite3"
        with store.transaction() as conn:
            assert conn.execute("PRAGMA busy_timeout").fetchone()[0] == 1234
