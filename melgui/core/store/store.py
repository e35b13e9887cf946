"""The history store: conversations per project folder, their messages, branches, plans,
pins, plan mode and notes, in one SQLite database (WAL); their tool calls (`store.calls`,
a CallLog) and wire log (`store.wire`, a WireLog) on the same connection.

Every method commits before it returns, so a kill loses nothing already handed over.
Methods raise sqlite3.Error on storage trouble; the Journal and the UI turn that into
a one-line message.
"""

from __future__ import annotations

import json
import re
import sqlite3
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import Future
from contextlib import AbstractContextManager, suppress
from pathlib import Path
from typing import ParamSpec

from melgui.core.protocol.messages import Message
from melgui.core.store.blobs import load_parts, put_parts
from melgui.core.store.call_log import CallLog
from melgui.core.store.database import (
    BUSY_TIMEOUT_MS,
    KeyHidingConnection,
    OpenedDatabase,
    open_database,
    transaction,
)
from melgui.core.store.paths import canonical_folder, database_path
from melgui.core.store.records import (
    BranchRecord,
    ConversationSummary,
    NoteRecord,
    PinRecord,
    PlanRecord,
    StoredMessage,
)
from melgui.core.store.schema import has_fts
from melgui.core.store.wire_log import WireLog
from melgui.core.store.write_behind import WriteBehind

Clock = Callable[[], float]
P = ParamSpec("P")
TITLE_LENGTH = 80
PURGE_AFTER = 30 * 24 * 3600.0  # soft-deleted conversations are removed for good after this

_SUMMARY_COLUMNS = (
    "id, folder, title, created_at, updated_at, model, role, deleted_at, title_custom"
)


def title_from(text: str) -> str:
    """A conversation title from its first message: first line, whitespace collapsed."""
    line = next((ln for ln in text.splitlines() if ln.strip()), "")
    line = " ".join(line.split())
    if len(line) > TITLE_LENGTH:
        line = line[: TITLE_LENGTH - 1].rstrip() + "…"
    return line


class Store:
    """One open history database. Not thread-safe: use it from one thread (the event loop)."""

    def __init__(self, opened: OpenedDatabase, *, clock: Clock = time.time) -> None:
        self._conn = opened.conn
        self.path: Path | None = opened.path
        self.notice: str | None = opened.notice
        self.has_fts = has_fts(self._conn)
        self._clock = clock
        self.calls = CallLog(self._conn, clock)
        self.wire = WireLog(self._conn)
        # The journal's writes, off the event loop; any other use of the connection
        # waits for them first (KeyHidingConnection.execute).
        self.behind: WriteBehind | None = None
        if isinstance(self._conn, KeyHidingConnection):
            self.behind = self._conn.behind = WriteBehind()

    @classmethod
    def open(
        cls,
        path: Path | None = None,
        *,
        clock: Clock = time.time,
        busy_timeout_ms: int = BUSY_TIMEOUT_MS,
    ) -> Store:
        """Open (or create) the history; never raises for a bad file (see `notice`)."""
        target = path if path is not None else database_path()
        return cls(open_database(target, busy_timeout_ms=busy_timeout_ms), clock=clock)

    def close(self) -> None:
        if self.behind is not None:
            self.behind.close()
        self._conn.close()

    def write_behind(
        self, write: Callable[P, object], /, *args: P.args, **kwargs: P.kwargs
    ) -> Future[object] | None:
        """Run `write` (a method of this store) on its writer thread, after the writes
        handed over before it; None when it ran now instead: inside the caller's own
        transaction, or once the store is closed (then it raises as a write does)."""
        behind = self.behind
        # The writer idle, an open transaction is the caller's: its writes join it now.
        if behind is None or not behind.open or (not behind.busy and self._conn.in_transaction):
            write(*args, **kwargs)
            return None
        return behind.submit(write, *args, **kwargs)

    def checkpoint(self) -> None:
        """Copy the WAL into the database file, from a connection of its own: safe to call
        in a worker thread (`asyncio.to_thread(store.checkpoint)`); never raises."""
        if self.path is None:
            return
        with suppress(sqlite3.Error):
            conn = sqlite3.connect(str(self.path), timeout=1.0)
            try:
                conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
            finally:
                conn.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def transaction(self) -> AbstractContextManager[sqlite3.Connection]:
        """Group writes into one commit (nested use joins the outer transaction)."""
        return transaction(self._conn)

    # -- conversations -------------------------------------------------------------

    def create_conversation(
        self,
        folder: str,
        *,
        title: str = "",
        model: str = "",
        role: str = "",
        conversation_id: str | None = None,
        created_at: float | None = None,
    ) -> str:
        """A new, empty conversation for the project `folder`; returns its id."""
        cid = conversation_id or uuid.uuid4().hex
        now = self._clock() if created_at is None else created_at
        self._conn.execute(
            "INSERT INTO conversations (id, folder, title, title_custom, created_at,"
            " updated_at, model, role) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
            (cid, canonical_folder(folder), title, int(bool(title)), now, now, model, role),
        )
        return cid

    def exists(self, cid: str) -> bool:
        row = self._conn.execute("SELECT 1 FROM conversations WHERE id = ?", (cid,)).fetchone()
        return row is not None

    def ids_starting_with(self, prefix: str, limit: int = 10) -> list[str]:
        if not prefix:
            return []
        rows = self._conn.execute(
            "SELECT id FROM conversations WHERE substr(id, 1, ?) = ? LIMIT ?",
            (len(prefix), prefix, limit),
        )
        return [str(row[0]) for row in rows]

    def summary(self, cid: str) -> ConversationSummary | None:
        row = self._conn.execute(
            f"SELECT {_SUMMARY_COLUMNS} FROM conversations WHERE id = ?", (cid,)
        ).fetchone()
        return _summary(row) if row else None

    def conversations(
        self,
        folder: str,
        *,
        query: str = "",
        limit: int | None = None,
        empty: bool = True,
        keep: str | None = None,
    ) -> list[ConversationSummary]:
        """Conversations of `folder` not deleted, newest first; `query` filters by text;
        `empty=False` leaves out those with no message yet (what a history list shows: a
        host stores its session's conversation when it opens, a window at its first
        message), but `keep` (one known to have a message, its first not written yet)."""
        sql = (
            f"SELECT {_SUMMARY_COLUMNS} FROM conversations WHERE folder = ? AND deleted_at IS NULL"
        )
        params: list[object] = [canonical_folder(folder)]
        if not empty:
            sql += (
                " AND (id = ? OR EXISTS (SELECT 1 FROM messages m"
                " WHERE m.conversation_id = conversations.id))"
            )
            params.append(keep or "")
        if query.strip():
            matching, match_params = self._matching_ids(query)
            sql += f" AND (title LIKE ? ESCAPE '\\' OR id IN ({matching}))"
            params += [f"%{_escape_like(query.strip())}%", *match_params]
        sql += " ORDER BY updated_at DESC, rowid DESC"
        if limit is not None:
            sql += " LIMIT ?"
            params.append(int(limit))
        return [_summary(row) for row in self._conn.execute(sql, params)]

    def _matching_ids(self, query: str) -> tuple[str, list[object]]:
        """SQL selecting ids of conversations whose messages contain the query's words."""
        words = re.findall(r"\w+", query)
        if self.has_fts and words:
            match = " ".join('"' + w.replace('"', '""') + '"*' for w in words)
            return (
                "SELECT m.conversation_id FROM messages_fts"
                " JOIN messages m ON m.id = messages_fts.rowid WHERE messages_fts MATCH ?",
                [match],
            )
        return (
            "SELECT conversation_id FROM messages WHERE content LIKE ? ESCAPE '\\'",
            [f"%{_escape_like(query.strip())}%"],
        )

    def rename(self, cid: str, title: str) -> None:
        """Set a title chosen by the person; an empty title goes back to the automatic one."""
        title = " ".join(title.split())
        if not title:
            first = self._conn.execute(
                "SELECT content FROM messages WHERE conversation_id = ? AND role = 'user'"
                " ORDER BY seq LIMIT 1",
                (cid,),
            ).fetchone()
            self._conn.execute(
                "UPDATE conversations SET title = ?, title_custom = 0 WHERE id = ?",
                (title_from(first[0]) if first else "", cid),
            )
            return
        self._conn.execute(
            "UPDATE conversations SET title = ?, title_custom = 1 WHERE id = ?", (title, cid)
        )

    def set_model(self, cid: str, *, model: str | None = None, role: str | None = None) -> None:
        if model is not None:
            self._conn.execute("UPDATE conversations SET model = ? WHERE id = ?", (model, cid))
        if role is not None:
            self._conn.execute("UPDATE conversations SET role = ? WHERE id = ?", (role, cid))

    def delete(self, cid: str) -> None:
        """Soft delete: hidden from the list until `undelete`, purged after 30 days."""
        self._conn.execute(
            "UPDATE conversations SET deleted_at = ? WHERE id = ?", (self._clock(), cid)
        )

    def forget_if_empty(self, cid: str) -> bool:
        """Remove for good a conversation that never had a message (a session that
        opened and closed with nothing said); True when it was removed."""
        cursor = self._conn.execute(
            "DELETE FROM conversations WHERE id = ?"
            " AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.conversation_id = ?)",
            (cid, cid),
        )
        return cursor.rowcount > 0

    def undelete(self, cid: str) -> None:
        self._conn.execute("UPDATE conversations SET deleted_at = NULL WHERE id = ?", (cid,))

    def purge_deleted(self, older_than: float = PURGE_AFTER) -> int:
        """Remove for good conversations deleted more than `older_than` seconds ago."""
        with self.transaction() as conn:
            cursor = conn.execute(
                "DELETE FROM conversations WHERE deleted_at IS NOT NULL AND deleted_at < ?",
                (self._clock() - older_than,),
            )
        return cursor.rowcount

    def restore_metadata(
        self,
        cid: str,
        *,
        title: str,
        title_custom: bool,
        updated_at: float,
        message_times: Sequence[float],
    ) -> None:
        """Put back the title and times an import carries (writes would have changed them)."""
        with self.transaction() as conn:
            conn.execute(
                "UPDATE conversations SET title = ?, title_custom = ?, updated_at = ? WHERE id = ?",
                (title, int(title_custom), updated_at, cid),
            )
            conn.executemany(
                "UPDATE messages SET created_at = ? WHERE conversation_id = ? AND seq = ?",
                ((at, cid, seq) for seq, at in enumerate(message_times)),
            )

    def _touch(self, cid: str) -> None:
        self._conn.execute(
            "UPDATE conversations SET updated_at = ? WHERE id = ?", (self._clock(), cid)
        )

    # -- messages ------------------------------------------------------------------

    def put_message(
        self, cid: str, seq: int, message: Message, *, partial: bool = False, indexed: bool = True
    ) -> None:
        """Write the message at position `seq`, replacing what was there (a partial row).

        `indexed=False`: not in the search index yet; `index_pending` puts it there."""
        with self.transaction() as conn:
            conn.execute(
                "INSERT INTO messages (conversation_id, seq, role, content, tool_calls,"
                " tool_call_id, status, partial, created_at, reasoning, parts, indexed)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                " ON CONFLICT (conversation_id, seq) DO UPDATE SET role = excluded.role,"
                " content = excluded.content, tool_calls = excluded.tool_calls,"
                " tool_call_id = excluded.tool_call_id, status = excluded.status,"
                " partial = excluded.partial, reasoning = excluded.reasoning,"
                " parts = excluded.parts, indexed = excluded.indexed",
                (
                    cid,
                    seq,
                    message.role,
                    message.content,
                    json.dumps([c.to_wire() for c in message.tool_calls]),
                    message.tool_call_id,
                    message.status,
                    int(partial),
                    self._clock(),
                    message.reasoning,
                    put_parts(conn, message, self._clock()),
                    int(indexed),
                ),
            )
            if message.role == "user" and not partial:
                conn.execute(
                    "UPDATE conversations SET title = ? WHERE id = ? AND title = ''"
                    " AND title_custom = 0",
                    (title_from(message.content), cid),
                )
            self._touch(cid)

    def replace_messages(self, cid: str, messages: Sequence[Message]) -> None:
        """Rewrite the whole message list (after a history repair)."""
        with self.transaction() as conn:
            conn.execute("DELETE FROM messages WHERE conversation_id = ?", (cid,))
            for seq, message in enumerate(messages):
                self.put_message(cid, seq, message)

    def index_pending(self, cid: str | None = None) -> int:
        """Put the messages written with `indexed=False` (of `cid`, or all) in the search
        index; returns how many."""
        where = "indexed = 0" + ("" if cid is None else " AND conversation_id = ?")
        with self.transaction() as conn:
            cursor = conn.execute(
                f"UPDATE messages SET indexed = 1 WHERE {where}", (() if cid is None else (cid,))
            )
        return cursor.rowcount

    def drop_messages_from(self, cid: str, seq: int) -> None:
        """Remove messages at positions >= seq (a partial row whose leg was retried)."""
        self._conn.execute(
            "DELETE FROM messages WHERE conversation_id = ? AND seq >= ?", (cid, seq)
        )

    def branch(self, cid: str, messages: Sequence[Message], reason: str, note: str = "") -> int:
        """Replace the message list, keeping the old one as a branch; returns its id.

        The history sent to the model is always the current list; a rewind, a
        compaction or an edit-and-resend never deletes what was said before it.
        """
        with self.transaction() as conn:
            cursor = conn.execute(
                "INSERT INTO branches (conversation_id, reason, note, created_at)"
                " VALUES (?, ?, ?, ?)",
                (cid, reason, note, self._clock()),
            )
            branch_id = int(cursor.lastrowid or 0)
            conn.execute(
                "INSERT INTO branch_messages (branch_id, seq, role, content, tool_calls,"
                " tool_call_id, status, created_at, reasoning, parts)"
                " SELECT ?, seq, role, content, tool_calls, tool_call_id, status, created_at,"
                " reasoning, parts"
                " FROM messages WHERE conversation_id = ? AND partial = 0",
                (branch_id, cid),
            )
            conn.execute("DELETE FROM messages WHERE conversation_id = ?", (cid,))
            for seq, message in enumerate(messages):
                self.put_message(cid, seq, message)
        return branch_id

    def branches(self, cid: str) -> list[BranchRecord]:
        rows = self._conn.execute(
            "SELECT b.id, b.reason, b.note, b.created_at,"
            " (SELECT COUNT(*) FROM branch_messages m WHERE m.branch_id = b.id)"
            " FROM branches b WHERE b.conversation_id = ? ORDER BY b.id",
            (cid,),
        )
        return [BranchRecord(int(r[0]), str(r[1]), str(r[2]), float(r[3]), int(r[4])) for r in rows]

    def branch_messages(self, branch_id: int) -> list[StoredMessage]:
        rows = self._conn.execute(
            "SELECT seq, role, content, tool_calls, tool_call_id, status, 0, created_at,"
            " reasoning, parts FROM branch_messages WHERE branch_id = ? ORDER BY seq",
            (branch_id,),
        )
        return [_stored_message(row, load_parts(self._conn, row[9])) for row in rows]

    def messages(self, cid: str) -> list[StoredMessage]:
        return read_messages(self._conn, cid)

    def message_count(self, cid: str) -> int:
        row = self._conn.execute(
            "SELECT COUNT(*) FROM messages WHERE conversation_id = ?", (cid,)
        ).fetchone()
        return int(row[0])

    def message_times(self, cid: str) -> list[float]:
        """When each message was stored, in order (nothing decoded)."""
        rows = self._conn.execute(
            "SELECT created_at FROM messages WHERE conversation_id = ? ORDER BY seq", (cid,)
        )
        return [float(at) for (at,) in rows]

    # -- plans, pins, plan mode and notes -----------------------------------------------

    def add_plan(
        self,
        cid: str,
        title: str,
        markdown: str,
        *,
        call_id: str | None = None,
        created_at: float | None = None,
    ) -> None:
        self._conn.execute(
            "INSERT INTO plans (conversation_id, call_id, title, markdown, created_at)"
            " VALUES (?, ?, ?, ?, ?)",
            (cid, call_id, title, markdown, self._clock() if created_at is None else created_at),
        )

    def plans(self, cid: str) -> list[PlanRecord]:
        rows = self._conn.execute(
            "SELECT title, markdown, created_at, call_id FROM plans WHERE conversation_id = ?"
            " ORDER BY id",
            (cid,),
        )
        return [PlanRecord(*row) for row in rows]

    def set_pins(self, cid: str, pins: Sequence[tuple[str, str]]) -> None:
        """The conversation's pinned facts are now `pins`, (text, pinned by) in order."""
        now = self._clock()
        with self.transaction():
            self._conn.execute("DELETE FROM pins WHERE conversation_id = ?", (cid,))
            self._conn.executemany(
                "INSERT INTO pins (conversation_id, seq, text, pinned_by, created_at)"
                " VALUES (?, ?, ?, ?, ?)",
                [(cid, seq, text, by, now) for seq, (text, by) in enumerate(pins)],
            )

    def pins(self, cid: str) -> list[PinRecord]:
        rows = self._conn.execute(
            "SELECT text, pinned_by FROM pins WHERE conversation_id = ? ORDER BY seq",
            (cid,),
        )
        return [PinRecord(*row) for row in rows]

    def set_plan_mode(self, cid: str, on: bool) -> None:
        self._conn.execute("UPDATE conversations SET plan_mode = ? WHERE id = ?", (int(on), cid))

    def plan_mode(self, cid: str) -> bool:
        """Whether the conversation was in plan mode when last recorded."""
        row = self._conn.execute(
            "SELECT plan_mode FROM conversations WHERE id = ?", (cid,)
        ).fetchone()
        return bool(row and row[0])

    def add_note(self, cid: str, kind: str, text: str, *, at: float | None = None) -> None:
        self._conn.execute(
            "INSERT INTO notes (conversation_id, kind, text, at) VALUES (?, ?, ?, ?)",
            (cid, kind, text, self._clock() if at is None else at),
        )

    def notes(self, cid: str) -> list[NoteRecord]:
        rows = self._conn.execute(
            "SELECT kind, text, at FROM notes WHERE conversation_id = ? ORDER BY id", (cid,)
        )
        return [NoteRecord(*row) for row in rows]


def read_messages(conn: sqlite3.Connection, cid: str) -> list[StoredMessage]:
    """A conversation's messages in order, read (and decoded) through `conn`."""
    rows = conn.execute(
        "SELECT seq, role, content, tool_calls, tool_call_id, status, partial, created_at,"
        " reasoning, parts FROM messages WHERE conversation_id = ? ORDER BY seq",
        (cid,),
    )
    return [_stored_message(row, load_parts(conn, row[9])) for row in rows]


def open_store(data_folder: Path | None = None, *, clock: Clock = time.time) -> Store:
    """The history of this user (or of `data_folder`); never raises, see `Store.notice`."""
    store = Store.open(database_path(data_folder), clock=clock)
    # Purging is housekeeping; a busy database must not stop the start.
    with suppress(sqlite3.Error):
        store.purge_deleted()
    # What a process that stopped between an answer and its indexing left unindexed.
    with suppress(sqlite3.Error):
        store.index_pending()
    return store


def _summary(row: tuple[object, ...]) -> ConversationSummary:
    cid, folder, title, created, updated, model, role, deleted, custom = row
    return ConversationSummary(
        id=str(cid),
        folder=str(folder),
        title=str(title),
        created_at=float(created),  # type: ignore[arg-type]
        updated_at=float(updated),  # type: ignore[arg-type]
        model=str(model),
        role=str(role),
        deleted_at=float(deleted) if deleted is not None else None,  # type: ignore[arg-type]
        title_custom=bool(custom),
    )


def _stored_message(row: tuple[object, ...], parts: list[dict[str, object]]) -> StoredMessage:
    seq, role, content, calls, call_id, status, partial, created, reasoning, _ = row
    message = Message.from_fields(
        role,
        content,
        json.loads(str(calls)) if calls and calls != "[]" else None,
        call_id,
        status,
        reasoning,
        parts,
    )
    return StoredMessage(int(seq), message, bool(partial), float(created))  # type: ignore[call-overload, arg-type]


def _escape_like(text: str) -> str:
    return text.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")
