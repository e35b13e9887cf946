"""Opening the history database: WAL, migrations, and a start that never fails.

A damaged file is moved aside (never overwritten) and a new one started; a locked
or too-new file is left alone and this run writes to a fallback file beside it.
Either way `OpenedDatabase.notice` says, in one line, what happened. The file is
checked for damage (`PRAGMA quick_check`) unless every earlier writer closed it cleanly
(see "Writers" below). Every text written has melgui's own keys hidden
(`KeyHidingConnection`).
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
import time
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from melgui.core.config.redaction import hide_secrets, known_secrets
from melgui.core.store.schema import NewerSchemaError, migrate
from melgui.core.store.write_behind import WriteBehind

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

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
    lease: Lease | None = None  # this process's writer lease (see "Writers" below)

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
    before closed it cleanly (see "Writers" below)."""
    lease = None if str(path) == ":memory:" else take_lease(Path(path))
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


# -- Writers -------------------------------------------------------------------------
# Who has a database open, so an open can tell whether every earlier writer ended cleanly.
#
# `PRAGMA quick_check` reads the whole file (about 33 ms of CPU on a 77 MB history), and
# it only finds something after a writer was killed mid-write (or the disk misbehaved
# under one). So each process that opens a database holds a lease for as long as its
# connection is open: a file in `<database>.writers/`, locked (flock) by that process
# and removed by its clean close. A lease file nobody holds a lock on belongs to a
# writer that ended without closing (killed, crashed, or exited without `close`); the
# kernel drops the lock of a dead process, never its file. An open checks the database
# when it finds such a lease, or when the folder is new (a history written before
# leases, or a new one); otherwise every earlier writer closed cleanly and the check is
# skipped. The check also runs when the file is not the one last checked (its device and
# inode, recorded in the folder after each check): a history moved aside or replaced.
# Where flock is missing (Windows), every open checks, as before.
#
# A lease is created under a name the scan ignores and renamed once locked, so a scan
# never mistakes a lease being taken for a dead one.

SUFFIX = ".lease"
TAKING = ".taking-"


def writers_folder(database: Path) -> Path:
    return database.with_name(database.name + ".writers")


@dataclass
class Lease:
    """This process's lease on one database, and what the open found about the others."""

    database: Path
    path: Path | None  # None: no lease could be taken (then the open checks)
    fd: int | None
    needs_check: bool
    stale: list[Path] = field(default_factory=list)

    def checked(self) -> None:
        """The check passed: the dead writers' leases have done their work, and the file
        checked is the one later opens may trust."""
        if self.path is not None:
            _write_identity(self.path.parent, self.database)
        for path in self.stale:
            with contextlib.suppress(OSError):
                path.unlink()
        self.stale = []

    def release(self) -> None:
        """The connection closed cleanly: remove the lease, then drop the lock."""
        if self.path is not None:
            with contextlib.suppress(OSError):
                self.path.unlink()
            self.path = None
        if self.fd is not None:
            os.close(self.fd)
            self.fd = None


def take_lease(database: Path) -> Lease:
    """Take a lease on `database`; `needs_check` says whether an earlier writer (or the
    lack of any record of them) calls for a check of the file."""
    if fcntl is None:
        return Lease(database, None, None, needs_check=True)
    folder = writers_folder(database)
    try:
        os.mkdir(folder)
        new = True
    except FileExistsError:
        new = False
    except OSError:
        return Lease(database, None, None, needs_check=True)
    stale = [] if new else _dead_leases(folder)
    try:
        path, fd = _lock_new(folder)
    except OSError:
        return Lease(database, None, None, needs_check=True, stale=stale)
    identity = _identity(database)
    known = not new and identity is not None and _read_identity(folder) == identity
    return Lease(database, path, fd, needs_check=not known or bool(stale), stale=stale)


def _token_hex(nbytes: int) -> str:
    """`secrets.token_hex`, without importing secrets (its hmac loads OpenSSL's library,
    about 4 MB resident, which an idle melgui host otherwise never needs)."""
    return os.urandom(nbytes).hex()


def _lock_new(folder: Path) -> tuple[Path, int]:
    assert fcntl is not None
    name = f"{os.getpid()}-{_token_hex(6)}"
    taking = folder / f"{TAKING}{name}"
    fd = os.open(taking, os.O_RDWR | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        path = folder / f"{name}{SUFFIX}"
        os.rename(taking, path)
    except OSError:
        os.close(fd)
        with contextlib.suppress(OSError):
            taking.unlink()
        raise
    return path, fd


def _dead_leases(folder: Path) -> list[Path]:
    """Leases whose holder is gone: their lock can be had."""
    assert fcntl is not None
    dead: list[Path] = []
    try:
        names = os.listdir(folder)
    except OSError:
        return dead
    for name in names:
        if not name.endswith(SUFFIX):
            continue
        path = folder / name
        try:
            fd = os.open(path, os.O_RDWR)
        except FileNotFoundError:
            continue  # closed cleanly meanwhile
        except OSError:
            dead.append(path)  # unreadable: assume the worst
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            continue  # held: its writer is alive
        finally:
            os.close(fd)
        dead.append(path)
    return dead


IDENTITY = "checked"


def _identity(database: Path) -> str | None:
    try:
        stat = os.stat(database)
    except OSError:
        return None
    return f"{stat.st_dev} {stat.st_ino}"


def _read_identity(folder: Path) -> str | None:
    try:
        return (folder / IDENTITY).read_text(encoding="ascii").strip()
    except (OSError, UnicodeDecodeError):
        return None


def _write_identity(folder: Path, database: Path) -> None:
    identity = _identity(database)
    if identity is None:
        return
    partial = folder / f"{TAKING}{IDENTITY}-{os.getpid()}-{_token_hex(4)}"
    try:
        partial.write_text(identity + "\n", encoding="ascii")
        os.replace(partial, folder / IDENTITY)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
