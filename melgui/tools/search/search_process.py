"""Running a search engine process: records streamed, capped, timed, and always reaped.

The process is started, read and waited for on a worker thread: for a search of a few
milliseconds, asyncio's subprocess machinery (transports, protocols, a child-watcher
thread per process) cost more CPU than the reading itself, and the selection of
records (globbing in Python) then runs off the event loop too.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from melgui.core.processes import child_preexec

_CHUNK = 256 * 1024
_STDERR_KEEP = 4096

Select = Callable[[bytes], list[bytes]]


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
) -> SearchRun:
    """Collect up to `max_records` separator-ended records of the process's stdout.

    With `select`, blocks of whole records (each ending in `separator`) go through it
    in bulk and only the records it returns are kept and counted.

    The process is killed when there are more, when `timeout` passes, or when the
    caller is cancelled; it is always waited for, so nothing is left behind. Raises
    OSError when it cannot be started.
    """
    search = _Search(argv, cwd, separator, max_records, timeout, select)
    work = asyncio.get_running_loop().run_in_executor(None, search.run)
    try:
        return await asyncio.shield(work)
    except asyncio.CancelledError:
        search.cancel()
        # Shielded: a second cancellation must not leave the child unreaped.
        with contextlib.suppress(Exception):
            await asyncio.shield(work)
        raise


class _Search:
    def __init__(
        self,
        argv: list[str],
        cwd: str,
        separator: bytes,
        max_records: int,
        timeout: float,
        select: Select | None,
    ) -> None:
        self.argv, self.cwd = argv, cwd
        self.separator, self.max_records = separator, max_records
        self.timeout, self.select = timeout, select
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
        out, err = proc.stdout.fileno(), proc.stderr.fileno()
        deadline = time.monotonic() + self.timeout
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
        complete = select(block) if select is not None else block.split(separator)[:-1]
        records = self.result.records
        room = self.max_records - len(records)
        if len(complete) > room:
            records.extend(complete[:room])
            self.result.more = True
        else:
            records.extend(complete)
        return pending
