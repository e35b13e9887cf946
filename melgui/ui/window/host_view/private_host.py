"""A window's private host: `melgui host --stdio --journal PATH` as the window's own
child, spoken to over its stdin and stdout, for a window that is no view of the user's
host (`melgui --no-host`, Windows, a user's host that cannot be reached or refuses the
version, or one that died with no new one able to start).

Its sessions are its window's alone: they are journalled in a journal of the window's
own (`private/window-PID-TOKEN.sqlite` in the data folder), not in the user's
`host.sqlite`, so the user's host never reopens them, a private host never reopens the
user's host's (or another window's), and the next private host of the same window (the
first one killed) reopens them from it, once. The window holds a lock on it for its life;
the journal goes with the window (`end`), and one left by a window that was killed is
removed by the next window that starts a private host.

    private = PrivateHost()
    client = await private.start()       # a HostClient; starting again: the same journal
    await private.end()                  # the child ended and reaped, its journal removed
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import sys
from pathlib import Path
from typing import IO

from melgui.core.config.settings import data_dir
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import spawn
from melgui.host import wire
from melgui.host.client import START_TIMEOUT, HostClient, HostGone, host_command

FOLDER = "private"
END_WITHIN = 5.0  # seconds a private host has to end once its stdin closed; then killed


class PrivateHost:
    """The private hosts of one window: one at a time, each on the same journal."""

    def __init__(self, folder: Path | None = None) -> None:
        self.folder = folder or data_dir() / FOLDER
        self.folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        _remove_left_behind(self.folder)
        name = f"window-{os.getpid()}-{secrets.token_hex(4)}"
        self.journal = self.folder / f"{name}.sqlite"
        self.log = self.folder / f"{name}.log"  # its stderr, as the user's host's host.log
        self._lock: IO[str] | None = _held(self.folder / f"{name}.lock")
        self.process: asyncio.subprocess.Process | None = None
        self.clients: list[HostClient] = []

    @property
    def pid(self) -> int | None:
        """The running private host's pid (None before the first start)."""
        return self.process.pid if self.process is not None else None

    async def start(self) -> HostClient:
        """A new private host on this window's journal (it reopens what the one before
        had open), initialized; raises OSError when it cannot start or answer."""
        with open(self.log, "ab") as log:  # the child keeps its own copy of it
            process = await spawn(
                *host_command("--stdio", "--journal", str(self.journal)),
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=log,
                limit=wire.MAX_LINE,
                # Not in the window's process group: Ctrl+C in the terminal reaches the
                # window, which ends it (its stdin closes), not the host mid-way.
                start_new_session=True,
            )
        self.process = process
        assert process.stdin is not None and process.stdout is not None
        client = HostClient(process.stdout, process.stdin)
        client.ending = lambda: _ended(process)
        self.clients.append(client)
        try:
            await within(client.initialize("window"), START_TIMEOUT)
        except (TimeoutError, HostGone, ConnectionError) as exc:
            await client.aclose()
            raise OSError(f"it did not start ({exc}); see {self.log}") from None
        except BaseException:
            await client.aclose()
            raise
        return client

    async def end(self) -> None:
        """Every private host of this window ended (stdin closed, killed if it does not
        end in time) and reaped; its journal removed."""
        for client in self.clients:
            await client.aclose()
        self.clients = []
        for path in (self.journal, f"{self.journal}-wal", f"{self.journal}-shm", self.log):
            with contextlib.suppress(OSError):
                os.unlink(path)
        if self._lock is not None:
            with contextlib.suppress(OSError):
                os.unlink(self._lock.name)
            self._lock.close()
            self._lock = None


async def _ended(process: asyncio.subprocess.Process) -> None:
    """Until `process` has ended and is reaped: its stdin is closed, so it ends by itself;
    killed after END_WITHIN seconds."""
    try:
        await within(process.wait(), END_WITHIN)
    except TimeoutError:
        with contextlib.suppress(ProcessLookupError):
            process.kill()
        await process.wait()


def _held(path: Path) -> IO[str] | None:
    """`path`, locked for as long as it stays open (this window's life); None where
    there are no such locks (Windows: a journal left behind is not removed there)."""
    if sys.platform == "win32":
        return None
    import fcntl

    handle = open(path, "a+")  # noqa: SIM115 - held for the window's life
    fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
    return handle


def _remove_left_behind(folder: Path) -> None:
    """The journals of windows that ended without removing theirs (killed): no lock is
    held on them any more, and no host will ever reopen them (their conversations are in
    the history, where the private host recorded them)."""
    if sys.platform == "win32":
        return
    import fcntl

    for lock in folder.glob("window-*.lock"):
        try:
            handle = open(lock, "a+")  # noqa: SIM115 - closed below
        except OSError:
            continue
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.close()
            continue  # a running window's
        for suffix in (".sqlite", ".sqlite-wal", ".sqlite-shm", ".log", ".lock"):
            with contextlib.suppress(OSError):
                os.unlink(lock.with_suffix(suffix))
        handle.close()
