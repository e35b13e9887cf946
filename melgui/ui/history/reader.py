"""Reading a stored conversation, and the sidebar's list, off the GUI thread.

Decoding a conversation's messages is most of the cost of reopening it (10,000 messages:
0.5-1.4 s on this machine), and it ran on the GUI thread. A worker thread reads them, with
the calls, plans and notes, through a read-only connection of its own (the Store's
connection is not shared across threads; WAL lets a reader and the journal's writes
meet); the result comes back to the GUI thread as a signal, where only repairs are done
(reading again just what they changed).
It is pure Python and holds the GIL, but the interpreter hands the GIL back to the GUI
thread every few milliseconds, so the window keeps painting instead of freezing.
The sidebar's list and its searches (a search reads every message's text) are queried
the same way, once the writes handed to the store's writer thread before are done: the
list shows a conversation once it has a message, and the window's first one is written
there.
"""

from __future__ import annotations

import sqlite3
from concurrent.futures import Future, ThreadPoolExecutor, wait
from pathlib import Path
from typing import Any

import shiboken6
from PySide6.QtCore import QObject, Signal, SignalInstance

from melgui.core.store.database import OpenedDatabase
from melgui.core.store.reading import calls_from_file, stored_from_file
from melgui.core.store.records import ConversationSummary
from melgui.core.store.store import Store

WRITTEN_WITHIN = 10.0  # seconds


class ConversationReader(QObject):
    """`read(path, cid)`; `finished(cid, StoredConversation or the exception)` on the GUI
    thread. The conversation comes with what its first paint needs of its calls' records;
    `read_calls(path, cid)` reads them all after: `callsRead(cid, records or the
    exception)`."""

    finished = Signal(str, object)
    callsRead = Signal(str, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="melgui-history")
        self.destroyed.connect(lambda: self._pool.shutdown(wait=False, cancel_futures=True))

    def read(self, path: Path, cid: str) -> None:
        future = self._pool.submit(stored_from_file, path, cid, all_calls=False)
        future.add_done_callback(lambda done: self._deliver(self.finished, cid, done))

    def read_calls(self, path: Path, cid: str) -> None:
        future = self._pool.submit(calls_from_file, path, cid)
        future.add_done_callback(lambda done: self._deliver(self.callsRead, cid, done))

    def _deliver(self, signal: SignalInstance, cid: str, done: Future[Any]) -> None:
        if done.cancelled() or not shiboken6.isValid(self):
            return
        error = done.exception()
        # Emitted from the worker thread: Qt queues it to the GUI thread.
        signal.emit(cid, error if error is not None else done.result())


def conversations_from_file(
    path: Path, folder: str, query: str, keep: str | None = None
) -> list[ConversationSummary]:
    """`Store.conversations` through a read-only connection of its own (a worker thread),
    as the sidebar lists them: not the empty ones (but `keep`)."""
    conn = sqlite3.connect(f"{path.resolve().as_uri()}?mode=ro", uri=True, timeout=5.0)
    try:
        store = Store(OpenedDatabase(conn, path))
        return store.conversations(folder, query=query, empty=False, keep=keep)
    finally:
        conn.close()


def written(write: Future[object] | None) -> None:
    """Return once `write` (None: nothing) is done, and so every write handed over
    before it (the store's writer thread writes them in order); a writer stuck on a busy
    file holds the list back WRITTEN_WITHIN seconds at most."""
    if write is not None:
        wait([write], timeout=WRITTEN_WITHIN)


def _listing(
    path: Path, folder: str, query: str, after: Future[object] | None, keep: str | None
) -> list[ConversationSummary]:
    written(after)
    return conversations_from_file(path, folder, query, keep)


class ListingReader(QObject):
    """`read(path, folder, query)` -> ticket; `finished(ticket, rows or the exception)`
    on the GUI thread. Queries run one after another on one thread of their own."""

    finished = Signal(int, object)

    def __init__(self, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="melgui-listing")
        self._ticket = 0
        self.destroyed.connect(lambda: self._pool.shutdown(wait=False, cancel_futures=True))

    def read(
        self,
        path: Path,
        folder: str,
        query: str,
        after: Future[object] | None = None,
        keep: str | None = None,
    ) -> int:
        """`after`: the store's last write handed over (WriteBehind.last), read after it;
        `keep`: listed even with no message written yet (Store.conversations)."""
        self._ticket += 1
        ticket = self._ticket
        future = self._pool.submit(_listing, path, folder, query, after, keep)
        future.add_done_callback(lambda done: self._deliver(ticket, done))
        return ticket

    def _deliver(self, ticket: int, done: Future[list[ConversationSummary]]) -> None:
        if done.cancelled() or not shiboken6.isValid(self):
            return
        error = done.exception()
        self.finished.emit(ticket, error if error is not None else done.result())
