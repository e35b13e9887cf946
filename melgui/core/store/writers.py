"""Who has a database open, so an open can tell whether every earlier writer ended cleanly.

`PRAGMA quick_check` reads the whole file (about 33 ms of CPU on a 77 MB history), and
it only finds something after a writer was killed mid-write (or the disk misbehaved
under one). So each process that opens a database holds a lease for as long as its
connection is open: a file in `<database>.writers/`, locked (flock) by that process
and removed by its clean close. A lease file nobody holds a lock on belongs to a
writer that ended without closing (killed, crashed, or exited without `close`); the
kernel drops the lock of a dead process, never its file. An open checks the database
when it finds such a lease, or when the folder is new (a history written before
leases, or a new one); otherwise every earlier writer closed cleanly and the check is
skipped. The check also runs when the file is not the one last checked (its device and
inode, recorded in the folder after each check): a history moved aside or replaced.
Where flock is missing (Windows), every open checks, as before.

A lease is created under a name the scan ignores and renamed once locked, so a scan
never mistakes a lease being taken for a dead one.
"""

from __future__ import annotations

import contextlib
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

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


def take(database: Path) -> Lease:
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


def _lock_new(folder: Path) -> tuple[Path, int]:
    assert fcntl is not None
    name = f"{os.getpid()}-{secrets.token_hex(6)}"
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
    partial = folder / f"{TAKING}{IDENTITY}-{os.getpid()}-{secrets.token_hex(4)}"
    try:
        partial.write_text(identity + "\n", encoding="ascii")
        os.replace(partial, folder / IDENTITY)
    except OSError:
        with contextlib.suppress(OSError):
            partial.unlink()
