"""The search process runner: records, caps, timeouts, cancels, and clean children."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.runtime.processes import child_preexec, reset_signals
from melgui.core.terminal.pty_session import process_alive
from melgui.tools.search import search_process
from melgui.tools.search.search_process import SearchRun, run_search

ROOT = str(Path(__file__).resolve().parents[2])
# Prints its pid, then whether SIGINT is ignored and its blocked mask, then records.
CHILD = (
    "import os, signal, sys, time\n"
    "from melgui.core.runtime.processes import signal_state\n"
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


async def test_more_records_than_asked_stop_the_process(reading: dict[str, object]) -> None:
    records, run = await search(child(5000, sleep=30), max_records=100, **reading)
    assert len(records) == 100 and run.more
    assert not process_alive(int(records[0].split()[0]))


async def test_a_timeout_keeps_what_came_and_ends_the_process(reading: dict[str, object]) -> None:
    records, run = await search(child(3, sleep=30), timeout=1.0, **reading)
    assert run.timed_out and len(records) == 4
    assert not process_alive(int(records[0].split()[0]))


async def test_a_cancelled_search_leaves_no_process(
    tmp_path: Path, reading: dict[str, object]
) -> None:
    marker = tmp_path / "pid"
    script = f"import os, time; open({str(marker)!r}, 'w').write(str(os.getpid())); time.sleep(30)"
    task = asyncio.ensure_future(search([sys.executable, "-c", script], **reading))
    while not marker.exists() or not marker.read_text():
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not process_alive(int(marker.read_text()))


async def test_a_missing_program_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        await search([str(tmp_path / "no-such-engine")])


def pidfd_here() -> bool:
    read, write = os.pipe()
    try:
        exit_fd = search_process._exit_fd(os.getpid(), read)
    finally:
        os.close(read)
        os.close(write)
    if exit_fd is None:
        return False
    os.close(exit_fd)
    return True


@pytest.fixture(params=["at exit", "as written"])
def reading(request: pytest.FixtureRequest) -> dict[str, object]:
    """Both ways of reading: at the child's exit and every 10 ms before (a pidfd,
    Linux), and as it writes (a grep's; elsewhere too)."""
    if request.param == "as written":
        return {}
    if not pidfd_here():
        pytest.skip("no pidfd here: only the reading as written")
    return {"drain_every": 0.01}


async def test_more_than_a_pipe_holds_all_comes(reading: dict[str, object]) -> None:
    """3 MB of records, written faster than a drain every 10 ms empties a 1 MB pipe."""
    records, run = await search(child(300_000), max_records=400_000, **reading)
    assert len(records) == 300_001 and run.returncode == 0 and not run.more
    assert records[1:4] == [b"r0", b"r1", b"r2"] and records[-1] == b"r299999"


async def test_a_last_record_without_its_separator_counts(reading: dict[str, object]) -> None:
    script = "import sys; sys.stdout.write('a\\nb\\nlast'); sys.stderr.write('said')"
    records, run = await search([sys.executable, "-c", script], **reading)
    assert records == [b"a", b"b", b"last"] and run.stderr == "said"


async def test_a_child_that_leaves_its_pipe_to_a_grandchild_ends_the_search_at_its_exit(
    tmp_path: Path,
) -> None:
    """Read at the exit, the search does not wait for the pipe to close (a grandchild
    holding it, here for 30 s)."""
    marker = tmp_path / "grandchild"
    script = (
        "import subprocess, sys\n"
        "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(30)'])\n"
        f"open({str(marker)!r}, 'w').write(str(p.pid))\n"
        "print('one'); print('two', end='')\n"
    )
    if not pidfd_here():
        pytest.skip("no pidfd here: the search reads until the pipe closes")
    try:
        records, run = await asyncio.wait_for(
            search([sys.executable, "-c", script], drain_every=0.01), 20
        )
        assert records == [b"one", b"two"] and run.returncode == 0 and not run.timed_out
    finally:
        if marker.exists():
            with contextlib.suppress(ProcessLookupError):
                os.kill(int(marker.read_text()), signal.SIGKILL)
