"""Running a search engine process: records streamed, capped, timed, and always reaped."""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from dataclasses import dataclass, field

from melgui.core.processes import reset_signals

_CHUNK = 64 * 1024
_STDERR_KEEP = 4096


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
    select: Callable[[bytes], list[bytes]] | None = None,
) -> SearchRun:
    """Collect up to `max_records` separator-ended records of the process's stdout.

    With `select`, blocks of whole records (each ending in `separator`) go through it
    in bulk and only the records it returns are kept and counted.

    The process is killed when there are more, when `timeout` passes, or when the
    caller is cancelled; it is always waited for, so nothing is left behind.
    """
    run = SearchRun()
    proc = await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        preexec_fn=reset_signals,
    )
    assert proc.stdout is not None and proc.stderr is not None
    stderr_task = asyncio.create_task(_read_capped(proc.stderr))
    try:
        async with asyncio.timeout(timeout):
            await _collect(proc.stdout, run, separator, max_records, select)
            if not run.more:
                run.returncode = await proc.wait()
    except TimeoutError:
        run.timed_out = True
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        # Shielded: a second cancellation must not leave the child unreaped.
        await asyncio.shield(_finish(proc, stderr_task, run))
    return run


async def _collect(
    stream: asyncio.StreamReader,
    run: SearchRun,
    separator: bytes,
    max_records: int,
    select: Callable[[bytes], list[bytes]] | None,
) -> None:
    pending = b""
    while True:
        chunk = await stream.read(_CHUNK)
        if chunk:
            pending += chunk
            cut = pending.rfind(separator) + 1
            block, pending = pending[:cut], pending[cut:]
        else:
            block, pending = pending, b""
            if block and not block.endswith(separator):
                block += separator
        if select is not None:
            complete = select(block)
        else:
            complete = block.split(separator)[:-1] if block else []
        room = max_records - len(run.records)
        if len(complete) > room:
            run.records.extend(complete[:room])
            run.more = True
            return
        run.records.extend(complete)
        if not chunk:
            return


async def _read_capped(stream: asyncio.StreamReader) -> bytes:
    kept = b""
    while chunk := await stream.read(_CHUNK):
        if len(kept) < _STDERR_KEEP:
            kept += chunk[: _STDERR_KEEP - len(kept)]
    return kept


async def _finish(
    proc: asyncio.subprocess.Process, stderr_task: asyncio.Task[bytes], run: SearchRun
) -> None:
    assert proc.stdout is not None
    # Drain what a killed process left in the pipe so its transport closes cleanly.
    while await proc.stdout.read(_CHUNK):
        pass
    await proc.wait()
    run.stderr = (await stderr_task).decode("utf-8", errors="replace")
