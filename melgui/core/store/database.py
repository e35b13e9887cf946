"""Opening the history database: WAL, migrations, and a start that never fails.

A damaged file is moved aside (never overwritten) and a new one started; a locked
or too-new file is left alone and this run writes to a fallback file beside it.
Either way `OpenedDatabase.notice` says, in one line, what happened. Every text written
has melgui's own keys hidden (`KeyHidingConnection`).
"""

from __future__ import annotations

import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from melgui.core.config.redaction import hide_secrets, known_secrets
from melgui.core.store import writers
from melgui.core.store.schema import NewerSchemaError, migrate
from melgui.core.store.write_behind import WriteBehind
from melgui.core.store.writers import Lease

BUSY_TIMEOUT_MS = 3000
WAL_SAFETY_PAGES = 16384  # 64 MB of 4 KB pages


class DamagedDatabaseError(Exception):
    """The file is not a readable SQLite database."""


@dataclass(frozen=True)
class OpenedDatabase:
    conn: sqlite3.Connection
    path: Path | None  # None: kept in memory only
    notice: str | None = None


def _hidden(parameters: Any) -> Any:
    secrets = known_secrets()
    if not secrets:
        return parameters

    def hide(value: Any) -> Any:
        return hide_secrets(value, secrets) if isinstance(value, str) else value

    if isinstance(parameters, Mapping):
        return {name: hide(value) for name, value in parameters.items()}
    return [hide(value) for value in parameters]


class KeyHidingConnection(sqlite3.Connection):
    """A connection that hides melgui's own keys (`known_secrets`: raw, JSON-escaped or
    URL-encoded) in every text it is given: whatever a model wrote into a call's
    arguments, a tool read from a file or a server echoed, the history never holds.

    With `behind` set, every statement first waits for the writes handed to it: what
    the writer thread has yet to write is read by nobody, and never interleaved."""

    behind: WriteBehind | None = None
    lease: Lease | None = None  # this process's writer lease (melgui.core.store.writers)

    def close(self) -> None:
        super().close()
        if self.lease is not None:  # after the close: a clean end is what it records
            self.lease.release()
            self.lease = None

    def execute(self, sql: str, parameters: Any = (), /) -> sqlite3.Cursor:
        if self.behind is not None:
            self.behind.settle()
        return super().execute(sql, _hidden(parameters))

    def executemany(self, sql: str, parameters: Iterable[Any], /) -> sqlite3.Cursor:
        if self.behind is not None:
            self.behind.settle()
        return super().executemany(sql, (_hidden(row) for row in parameters))


def settle(conn: sqlite3.Connection) -> None:
    """Wait for the writes handed to `conn`'s writer thread, if it has one."""
    behind = getattr(conn, "behind", None)
    if behind is not None:
        behind.settle()


@contextmanager
def transaction(conn: sqlite3.Connection) -> Iterator[sqlite3.Connection]:
    """Group writes into one commit (nested use joins the outer transaction)."""
    settle(conn)  # a transaction the writer thread has open is not the caller's to join
    if conn.in_transaction:
        yield conn
        return
    conn.execute("BEGIN IMMEDIATE")
    try:
        yield conn
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    conn.execute("COMMIT")


def connect(path: Path | str, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> sqlite3.Connection:
    """Open, check and migrate one database file; raises on damage, lock or newer schema.

    The file is checked (`PRAGMA quick_check`) unless every process that opened it
    before closed it cleanly (melgui.core.store.writers)."""
    lease = None if str(path) == ":memory:" else writers.take(Path(path))
    try:
        conn = sqlite3.connect(
            str(path),
            isolation_level=None,
            check_same_thread=False,
            timeout=busy_timeout_ms / 1000,
            factory=KeyHidingConnection,
        )
    except BaseException:
        if lease is not None:
            lease.release()
        raise
    assert isinstance(conn, KeyHidingConnection)
    conn.lease = lease
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_ms)}")
        if lease is None or lease.needs_check:
            check = conn.execute("PRAGMA quick_check").fetchone()
            if check is None or check[0] != "ok":
                raise DamagedDatabaseError(str(check[0]) if check else "integrity check failed")
            if lease is not None:
                lease.checked()
        if str(path) != ":memory:":
            conn.execute("PRAGMA journal_mode = WAL").fetchone()
        conn.execute("PRAGMA synchronous = NORMAL")
        # Checkpoints (the fsyncs) run off the event loop, see Store.checkpoint; this is
        # only the safety net for a WAL that nobody checkpoints.
        conn.execute(f"PRAGMA wal_autocheckpoint = {WAL_SAFETY_PAGES}")
        conn.execute("PRAGMA foreign_keys = ON")
        migrate(conn)
    except BaseException:
        conn.close()
        raise
    return conn


def open_database(path: Path, *, busy_timeout_ms: int = BUSY_TIMEOUT_MS) -> OpenedDatabase:
    """Open the history at `path`, recovering from every failure with a notice."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        return OpenedDatabase(connect(path, busy_timeout_ms=busy_timeout_ms), path)
    except NewerSchemaError as exc:
        return _fallback(path, f"History not opened: {exc}.", busy_timeout_ms)
    except sqlite3.OperationalError as exc:  # locked, busy, unreadable, read-only, disk full
        if _is_locked(exc):
            return _fallback(
                path,
                "History not opened: the database is locked by another program.",
                busy_timeout_ms,
            )
        return _in_memory(f"History cannot be kept: {exc}.")
    except (sqlite3.DatabaseError, DamagedDatabaseError) as exc:  # not a database, corrupt
        return _recover_damaged(path, exc, busy_timeout_ms)
    except OSError as exc:
        return _in_memory(f"History cannot be kept: {exc.strerror or exc}.")


def _recover_damaged(path: Path, exc: Exception, busy_timeout_ms: int) -> OpenedDatabase:
    try:
        aside = move_aside(path)
    except OSError as move_error:
        return _in_memory(
            f"History database is damaged ({exc}) and could not be moved aside "
            f"({move_error.strerror or move_error}); this session is not kept."
        )
    try:
        conn = connect(path, busy_timeout_ms=busy_timeout_ms)
    except (sqlite3.Error, DamagedDatabaseError, NewerSchemaError) as again:
        return _in_memory(f"History cannot be kept: {again}.")
    notice = (
        f"The history database was damaged ({exc}); it was kept as {aside.name} "
        "and a new history was started."
    )
    return OpenedDatabase(conn, path, notice)


def _is_locked(exc: BaseException) -> bool:
    text = str(exc).lower()
    return "locked" in text or "busy" in text


def _fallback(path: Path, reason: str, busy_timeout_ms: int) -> OpenedDatabase:
    fallback = _unique(path.with_name(f"{path.stem}-{_stamp()}-{os.getpid()}{path.suffix}"))
    try:
        conn = connect(fallback, busy_timeout_ms=busy_timeout_ms)
    except (sqlite3.Error, DamagedDatabaseError, NewerSchemaError, OSError) as exc:
        return _in_memory(f"{reason} This session is not kept ({exc}).")
    return OpenedDatabase(conn, fallback, f"{reason} This session is kept in {fallback.name}.")


def _in_memory(notice: str) -> OpenedDatabase:
    return OpenedDatabase(connect(":memory:"), None, notice)


def move_aside(path: Path) -> Path:
    """Rename the database (and its -wal/-shm companions) to a new, unused name."""
    aside = _unique(path.with_name(f"{path.name}.damaged-{_stamp()}"))
    os.replace(path, aside)  # _unique guarantees nothing is overwritten
    for companion in ("-wal", "-shm", "-journal"):
        extra = Path(str(path) + companion)
        if extra.exists():
            os.replace(extra, _unique(Path(str(aside) + companion)))
    return aside


def _unique(candidate: Path) -> Path:
    if not candidate.exists():
        return candidate
    n = 2
    while True:
        numbered = candidate.with_name(f"{candidate.name}.{n}")
        if not numbered.exists():
            return numbered
        n += 1


def _stamp() -> str:
    return time.strftime("%Y%m%d-%H%M%S")
