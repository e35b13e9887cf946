"""The search process runner: records, caps, timeouts, cancels, and clean children."""

from __future__ import annotations

import asyncio
import contextlib
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.processes import child_preexec, reset_signals
from melgui.core.terminal.pty_session import process_alive
from melgui.tools.search.search_process import SearchRun, run_search

ROOT = str(Path(__file__).resolve().parents[2])
# Prints its pid, then whether SIGINT is ignored and its blocked mask, then records.
CHILD = (
    "import os, signal, sys, time\n"
    "from melgui.core.processes import signal_state\n"
    "print(os.getpid(), signal.getsignal(signal.SIGINT) is signal.SIG_IGN,"
    " signal_state()['SigBlk'], flush=True)\n"
    "n = int(sys.argv[1])\n"
    "sys.stdout.write(''.join(f'r{i}\\n' for i in range(n))); sys.stdout.flush()\n"
    "time.sleep(float(sys.argv[2]))\n"
)


def child(records: int, sleep: float = 0.0) -> list[str]:
    return [sys.executable, "-c", CHILD, str(records), str(sleep)]


async def search(argv: list[str], **options: object) -> tuple[list[bytes], SearchRun]:
    settings: dict[str, object] = {"separator": b"\n", "max_records": 1000, "timeout": 20.0}
    settings.update(options)
    run = await run_search(argv, ROOT, **settings)  # type: ignore[arg-type]
    return run.records, run


@contextlib.contextmanager
def clean_signals() -> Iterator[None]:
    """This thread with nothing blocked and nothing ignored beyond what subprocess restores
    (SIGPIPE, SIGXFSZ), whatever the suite inherited (CI may run it from a parent that
    ignores SIGTERM); everything put back after."""
    mask = signal.pthread_sigmask(signal.SIG_SETMASK, set())
    ignored = []
    for number in signal.valid_signals():
        if number in (signal.SIGPIPE, signal.SIGXFSZ, signal.SIGKILL, signal.SIGSTOP):
            continue
        with contextlib.suppress(OSError, ValueError):
            if signal.getsignal(number) is signal.SIG_IGN:
                signal.signal(number, signal.SIG_DFL)
                ignored.append(number)
    try:
        yield
    finally:
        for number in ignored:
            signal.signal(number, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_SETMASK, mask)


def test_a_child_needs_no_reset_unless_a_signal_is_ignored_or_blocked() -> None:
    with clean_signals():
        assert child_preexec() is None
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            assert child_preexec() is reset_signals
        finally:
            signal.signal(signal.SIGINT, previous)
        assert child_preexec() is None
        signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGUSR1})
        try:
            assert child_preexec() is reset_signals
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGUSR1})


@pytest.mark.parametrize("ignore", [False, True])
async def test_records_come_from_a_child_with_default_signals(ignore: bool) -> None:
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN if ignore else signal.SIG_DFL)
    try:
        records, run = await search(child(5))
    finally:
        signal.signal(signal.SIGINT, previous)
    _pid, sigint_ignored, blocked = records[0].split()
    assert (sigint_ignored, blocked) == (b"False", b"0")
    assert records[1:] == [f"r{i}".encode() for i in range(5)]
    assert run.returncode == 0


async def test_more_records_than_asked_stop_the_process() -> None:
    records, run = await search(child(5000, sleep=30), max_records=100)
    assert len(records) == 100 and run.more
    assert not process_alive(int(records[0].split()[0]))


async def test_a_timeout_keeps_what_came_and_ends_the_process() -> None:
    records, run = await search(child(3, sleep=30), timeout=1.0)
    assert run.timed_out and len(records) == 4
    assert not process_alive(int(records[0].split()[0]))


async def test_a_cancelled_search_leaves_no_process(tmp_path: Path) -> None:
    marker = tmp_path / "pid"
    script = f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    task = asyncio.ensure_future(search([sys.executable, "-c", script]))
    while not marker.exists() or not marker.read_text():
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not process_alive(int(marker.read_text()))


async def test_a_missing_program_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        await search([str(tmp_path / "no-such-engine")])
