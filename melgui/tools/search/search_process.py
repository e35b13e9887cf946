"""Running a search engine process: records streamed, capped, timed, and always reaped.

The process is started, read and waited for on a worker thread: for a search of a few
milliseconds, asyncio's subprocess machinery (transports, protocols, a child-watcher
thread per process) cost more CPU than the reading itself, and the selection of
records (globbing in Python) then runs off the event loop too.

Given `drain_every`, on Linux the thread waits for the child's exit (a pidfd) rather
than for each write: the pipe is enlarged to 1 MB and read every `drain_every` seconds
or at the exit. rg writes 8 KB at a time, and for a listing of a few thousand paths
waking for each write cost more CPU than the reading; the price is a cap seen up to
`drain_every` late (a grep, capped after a few hundred lines, reads as written).
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import os
import select
import selectors
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TypeVar

from melgui.core.runtime.processes import child_preexec

_CHUNK = 256 * 1024
_STDERR_KEEP = 4096
_PIPE_SIZE = 1024 * 1024  # the default is the most an unprivileged process may ask for

Select = Callable[[bytes], list[bytes]]
T = TypeVar("T")


@dataclass(slots=True)
class SearchRun:
    records: list[bytes] = field(default_factory=list)
    more: bool = False  # stopped early: more records than asked for
    timed_out: bool = False
    returncode: int | None = None
    stderr: str = ""


async def run_search(
    argv: list[str],
    cwd: str,
    *,
    separator: bytes,
    max_records: int,
    timeout: float,
    select: Select | None = None,
    drain_every: float | None = None,
) -> SearchRun:
    """Collect up to `max_records` separator-ended records of the process's stdout.

    With `select`, blocks of whole records (each ending in `separator`) go through it
    in bulk and only the records it returns are kept and counted. With `drain_every`,
    stdout is read at the process's exit and every `drain_every` seconds before (where
    a pidfd can tell the exit), not as it is written.

    The process is killed when there are more, when `timeout` passes, or when the
    caller is cancelled; it is always waited for, so nothing is left behind. Raises
    OSError when it cannot be started.
    """
    return await in_search_thread(
        lambda searches: searches.run(
            argv,
            cwd,
            separator=separator,
            max_records=max_records,
            timeout=timeout,
            select=select,
            drain_every=drain_every,
        )
    )


async def in_search_thread(job: Callable[[Searches], T]) -> T:
    """`job` on a worker thread, given what starts its searches (`Searches.run`, as
    `run_search`): what comes before and after a search (finding the project's rules,
    sorting what it found) runs there too, with one hand-over between threads.
    Cancelled, the search running is ended, and any the job would start; the job is
    always waited for."""
    searches = Searches()
    work = asyncio.get_running_loop().run_in_executor(None, job, searches)
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        searches.cancel()
        # Shielded: a second cancellation must not leave the child unreaped.
        with contextlib.suppress(Exception):
            await asyncio.shield(work)
        raise


class Searches:
    """Runs a job's searches on its worker thread (`in_search_thread`)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._cancelled = False
        self._running: _Search | None = None

    def run(
        self,
        argv: list[str],
        cwd: str,
        *,
        separator: bytes,
        max_records: int,
        timeout: float,
        select: Select | None = None,
        drain_every: float | None = None,
    ) -> SearchRun:
        """As `run_search`, on this thread."""
        search = _Search(argv, cwd, separator, max_records, timeout, select, drain_every)
        with self._lock:
            self._running = search
            if self._cancelled:
                search.cancel()
        return search.run()

    def cancel(self) -> None:
        with self._lock:
            self._cancelled = True
            running = self._running
        if running is not None:
            running.cancel()


class _Search:
    def __init__(
        self,
        argv: list[str],
        cwd: str,
        separator: bytes,
        max_records: int,
        timeout: float,
        select: Select | None,
        drain_every: float | None = None,
    ) -> None:
        self.argv, self.cwd = argv, cwd
        self.separator, self.max_records = separator, max_records
        self.timeout, self.select = timeout, select
        self.drain_every = drain_every
        self.result = SearchRun()
        self._cancelled = False
        self._proc: subprocess.Popen[bytes] | None = None

    def cancel(self) -> None:
        self._cancelled = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()

    def run(self) -> SearchRun:
        run = self.result
        proc = self._proc = subprocess.Popen(
            self.argv,
            cwd=self.cwd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            preexec_fn=child_preexec(),  # computed here: the blocked mask is per thread
        )
        assert proc.stdout is not None and proc.stderr is not None
        stderr = b""
        try:
            if self._cancelled:
                return run
            stderr = self._read(proc)
        finally:
            if proc.returncode is None and (run.more or run.timed_out or self._cancelled):
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
            code = proc.wait()
            proc.stdout.close()
            proc.stderr.close()
        if not run.more and not run.timed_out:
            run.returncode = code
        run.stderr = stderr.decode("utf-8", errors="replace")
        return run

    def _read(self, proc: subprocess.Popen[bytes]) -> bytes:
        """Read both pipes until stdout ends, the cap, the deadline or a cancel."""
        assert proc.stdout is not None and proc.stderr is not None
        deadline = time.monotonic() + self.timeout
        drain_every = self.drain_every
        exit_fd = None if drain_every is None else _exit_fd(proc.pid, proc.stdout.fileno())
        if drain_every is not None and exit_fd is not None:
            try:
                return self._read_at_exit(proc, exit_fd, deadline, drain_every)
            finally:
                os.close(exit_fd)
        return self._read_as_written(proc, deadline)

    def _read_at_exit(
        self, proc: subprocess.Popen[bytes], exit_fd: int, deadline: float, drain_every: float
    ) -> bytes:
        """Read stdout when the child exits and every `drain_every` seconds before,
        stderr as it comes."""
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.fileno(), proc.stderr.fileno()
        os.set_blocking(out, False)
        poller = select.poll()
        poller.register(exit_fd, select.POLLIN)
        poller.register(err, select.POLLIN)
        kept = pending = b""
        exited, stdout_open = False, True
        while not self._cancelled:
            left = deadline - time.monotonic()
            for fd, _ in poller.poll(min(left, drain_every) * 1000) if left > 0 else ():
                if fd == exit_fd:
                    exited = True
                    poller.unregister(exit_fd)
                    continue
                chunk = os.read(err, _CHUNK)
                if not chunk:
                    poller.unregister(err)
                elif len(kept) < _STDERR_KEEP:
                    kept += chunk[: _STDERR_KEEP - len(kept)]
            if stdout_open:
                pending, stdout_open = self._drain(out, pending)
                if self.result.more:
                    return kept
            if left <= 0:
                self.result.timed_out = True
                return kept
            if exited:
                if stdout_open:  # a child of its own holds the pipe: what came is all
                    self._take(pending, b"")
                return kept + _rest(err, _STDERR_KEEP - len(kept))
        return kept

    def _drain(self, out: int, pending: bytes) -> tuple[bytes, bool]:
        """Take what the (non-blocking) pipe holds; the partial rest, and whether the
        pipe is still open."""
        while True:
            try:
                chunk = os.read(out, _PIPE_SIZE)
            except BlockingIOError:
                return pending, True
            pending = self._take(pending, chunk)
            if not chunk:
                return pending, False
            if self.result.more or len(chunk) < _PIPE_SIZE // 2:  # most likely empty now
                return pending, True

    def _read_as_written(self, proc: subprocess.Popen[bytes], deadline: float) -> bytes:
        """Read both pipes as the child writes them (no `drain_every`, no pidfd, or a
        pipe that could not be enlarged)."""
        assert proc.stdout is not None and proc.stderr is not None
        out, err = proc.stdout.fileno(), proc.stderr.fileno()
        pending = b""
        kept = b""
        with selectors.DefaultSelector() as selector:
            selector.register(out, selectors.EVENT_READ)
            selector.register(err, selectors.EVENT_READ)
            open_pipes = 2
            while open_pipes and not self._cancelled:
                left = deadline - time.monotonic()
                if left <= 0:
                    self.result.timed_out = True
                    return kept
                for key, _ in selector.select(min(left, 0.25)):
                    chunk = os.read(key.fd, _CHUNK)
                    if key.fd == err:
                        if not chunk:
                            selector.unregister(err)
                            open_pipes -= 1
                        elif len(kept) < _STDERR_KEEP:
                            kept += chunk[: _STDERR_KEEP - len(kept)]
                        continue
                    if not chunk:
                        selector.unregister(out)
                        open_pipes -= 1
                    pending = self._take(pending, chunk)
                    if self.result.more:
                        return kept
        return kept

    def _take(self, pending: bytes, chunk: bytes) -> bytes:
        """Keep the whole records of `pending + chunk`; returns the partial rest."""
        separator = self.separator
        if chunk:
            pending += chunk
            cut = pending.rfind(separator) + 1
            block, pending = pending[:cut], pending[cut:]
        else:  # the end: a last record without its separator still counts
            block, pending = pending, b""
            if block and not block.endswith(separator):
                block += separator
        if not block:
            return pending
        select = self.select
        if select is not None:
            complete = select(block)
        else:
            complete = block.split(separator)
            complete.pop()
        records = self.result.records
        room = self.max_records - len(records)
        if len(complete) > room:
            records.extend(complete[:room])
            self.result.more = True
        elif records:
            records.extend(complete)
        else:  # the first block: kept as it is, not copied
            self.result.records = complete
        return pending


def _exit_fd(pid: int, stdout: int) -> int | None:
    """A pidfd of the child, readable once it exits, when its stdout pipe could be
    enlarged to `_PIPE_SIZE` too; else None (read it as it is written)."""
    pidfd_open = getattr(os, "pidfd_open", None)
    setpipe_sz = getattr(fcntl, "F_SETPIPE_SZ", None)
    if pidfd_open is None or setpipe_sz is None:
        return None
    try:
        fcntl.fcntl(stdout, setpipe_sz, _PIPE_SIZE)
        return int(pidfd_open(pid))
    except OSError:  # an old kernel, or the user's pipe memory used up
        return None


def _rest(fd: int, room: int) -> bytes:
    """What a non-blocking read finds in a pipe whose writer exited (up to `room`)."""
    os.set_blocking(fd, False)
    kept = b""
    with contextlib.suppress(BlockingIOError):
        while chunk := os.read(fd, _CHUNK):
            kept += chunk[: max(0, room - len(kept))]
    return kept
