"""The store's writer thread: writes handed over are done in order, off the caller's
thread, and nobody reads the store before they are written."""

from __future__ import annotations

import sqlite3
import threading
import time
from pathlib import Path

import pytest

from melgui.core.protocol.messages import Message
from melgui.core.store import Store, open_store


@pytest.fixture
def store(tmp_path: Path) -> Store:
    return open_store(tmp_path / "data")


def test_a_read_waits_for_the_writes_handed_over_before_it(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    threads: list[int] = []

    def slow_put(seq: int, text: str) -> None:
        threads.append(threading.get_ident())
        time.sleep(0.2)  # the writer is still busy when the read below starts
        store.put_message(cid, seq, Message.user(text))

    started = time.monotonic()
    first = store.write_behind(slow_put, 0, "first")
    second = store.write_behind(slow_put, 1, "second")
    assert first is not None and second is not None
    assert time.monotonic() - started < 0.1  # handing over does not wait
    assert [s.message.content for s in store.messages(cid)] == ["first", "second"]
    assert first.done() and second.done()
    # The read did the write the writer had not begun: one thread at a time, in order.
    assert len(threads) == 2


def test_a_write_nobody_waits_for_is_done_on_the_writer_thread(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    threads: list[int] = []

    def put() -> None:
        threads.append(threading.get_ident())
        store.put_message(cid, 0, Message.user("behind"))  # its own statements do not wait

    future = store.write_behind(put)
    assert future is not None
    future.result(timeout=10)
    assert threads != [threading.get_ident()]
    assert [s.message.content for s in store.messages(cid)] == ["behind"]


def test_inside_the_caller_s_transaction_a_write_joins_it_at_once(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    with pytest.raises(RuntimeError), store.transaction():
        assert store.write_behind(store.put_message, cid, 0, Message.user("rolled back")) is None
        raise RuntimeError("the caller gives up: its transaction is rolled back")
    assert store.messages(cid) == []


def test_once_the_store_is_closed_a_write_fails_as_any_write_does(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.write_behind(store.put_message, cid, 0, Message.user("kept"))
    store.close()  # writes what was handed over first
    with pytest.raises(sqlite3.ProgrammingError):
        store.write_behind(store.put_message, cid, 1, Message.user("too late"))
    with open_store(tmp_path / "data") as again:
        assert [s.message.content for s in again.messages(cid)] == ["kept"]
