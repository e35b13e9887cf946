"""The history's quick_check runs only after a writer ended uncleanly (writers.py):
real processes, killed with SIGKILL, and a real file corrupted in place."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from melgui.core.protocol.messages import Message
from melgui.core.store import database as writers
from melgui.core.store import open_store
from melgui.core.store.paths import database_path

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="flock")

WRITER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from melgui.core.store import open_store
    store = open_store(Path(sys.argv[1]))
    store.create_conversation(sys.argv[1])
    print("ready", flush=True)
    if sys.argv[2] == "close":
        store.close()
    else:
        time.sleep(60)
    """
)


def _writer(folder: Path, end: str) -> subprocess.Popen[str]:
    env = dict(os.environ, PYTHONPATH=str(Path(__file__).resolve().parents[3]))
    process = subprocess.Popen(
        [sys.executable, "-c", WRITER, str(folder), end],
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    line = process.stdout.readline().strip()
    process.stdout.close()
    assert line == "ready"
    return process


def _needs_check(folder: Path) -> bool:
    lease = writers.take_lease(database_path(folder))
    try:
        return lease.needs_check
    finally:
        lease.release()


def _fill_and_close(folder: Path) -> None:
    store = open_store(folder)
    cid = store.create_conversation(str(folder))
    for seq in range(200):
        store.put_message(cid, seq, Message.user("hello " * 50))
    store.close()


def _corrupt_last_page_in_place(folder: Path) -> None:
    """Damage a message page only quick_check reads; the file keeps its inode."""
    path = database_path(folder)
    size = path.stat().st_size
    with path.open("r+b") as file:
        file.seek(size - 4096 + 8)
        file.write(b"\xff" * 200)


def test_a_history_closed_cleanly_is_not_checked_at_the_next_open(tmp_path: Path) -> None:
    assert _needs_check(tmp_path)  # never checked: the first open checks
    open_store(tmp_path).close()
    process = _writer(tmp_path, "close")
    assert process.wait(timeout=30) == 0
    assert not _needs_check(tmp_path)
    assert [p.name for p in writers.writers_folder(database_path(tmp_path)).iterdir()] == [
        writers.IDENTITY
    ]


def test_a_writer_killed_makes_the_next_open_check_and_find_damage(tmp_path: Path) -> None:
    _fill_and_close(tmp_path)
    assert not _needs_check(tmp_path)
    process = _writer(tmp_path, "hang")
    assert not _needs_check(tmp_path)  # alive: its lease is held, not stale
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    assert _needs_check(tmp_path)
    _corrupt_last_page_in_place(tmp_path)
    store = open_store(tmp_path)
    try:
        assert store.notice is not None and "damaged" in store.notice
    finally:
        store.close()
    assert any(p.name.startswith("history.sqlite3.damaged-") for p in tmp_path.iterdir())


def test_a_passed_check_clears_the_dead_writers_lease(tmp_path: Path) -> None:
    open_store(tmp_path).close()
    process = _writer(tmp_path, "hang")
    process.send_signal(signal.SIGKILL)
    process.wait(timeout=30)
    store = open_store(tmp_path)  # checks, passes, and forgets the dead lease
    assert store.notice is None
    store.close()
    assert not _needs_check(tmp_path)


def test_the_skip_is_only_for_a_file_cleanly_closed(tmp_path: Path) -> None:
    """In-place damage after a clean close is what the skipped check no longer sees at
    open (the trade for 33 ms per start); the same damage after a kill is found."""
    _fill_and_close(tmp_path)
    _corrupt_last_page_in_place(tmp_path)
    store = open_store(tmp_path)
    try:
        assert store.notice is None
    finally:
        store.close()


def test_a_history_replaced_by_another_file_is_checked(tmp_path: Path) -> None:
    open_store(tmp_path).close()
    path = database_path(tmp_path)
    copy = path.with_name("copy.sqlite3")
    copy.write_bytes(path.read_bytes())
    os.replace(copy, path)
    assert _needs_check(tmp_path)


def test_two_live_writers_do_not_make_each_other_check(tmp_path: Path) -> None:
    open_store(tmp_path).close()
    first = open_store(tmp_path)
    second = open_store(tmp_path)
    try:
        assert not _needs_check(tmp_path)
    finally:
        second.close()
        first.close()
    assert not _needs_check(tmp_path)
