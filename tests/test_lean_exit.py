"""melgui exec ends its process without the interpreter's teardown, and loses nothing of
what the teardown's first steps did: threads joined, exit functions run, stdout and
stderr flushed, the exit code kept; a flush that fails leaves the ordinary exit to say so."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

SCRIPT = """
import atexit, sys, threading, time
from concurrent.futures import ThreadPoolExecutor
from melgui import lean_start

marker = sys.argv[1]
atexit.register(lambda: open(marker, "w").write("ran"))
def late():
    time.sleep(0.3)
    print("from a thread, late")
threading.Thread(target=late).start()
pool = ThreadPoolExecutor(1)  # idle workers, never shut down: joined as at an exit
pool.submit(lambda: None).result()
sys.stdout.reconfigure(write_through=False)
print("x" * 200_000, end="\\n")
print("to stderr", file=sys.stderr)
raise SystemExit(lean_start.end_process(3))
"""


def run(marker: Path, **options: object) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    return subprocess.run(
        [sys.executable, "-c", SCRIPT, str(marker)], env=env, timeout=60, **options
    )  # type: ignore[call-overload]


def test_the_process_ends_with_everything_written_and_its_code(tmp_path: Path) -> None:
    marker = tmp_path / "atexit"
    result = run(marker, capture_output=True)
    assert result.returncode == 3
    assert result.stdout.split(b"\n")[0] == b"x" * 200_000
    assert b"from a thread, late\n" in result.stdout
    assert result.stderr == b"to stderr\n"
    assert marker.read_text() == "ran"


def test_a_stdout_nobody_reads_gets_the_ordinary_exit(tmp_path: Path) -> None:
    """The reader went away: the flush fails and the interpreter's own exit reports it
    (exit 120), as it did before the teardown was skipped."""
    read, write = os.pipe()
    os.close(read)
    try:
        result = run(tmp_path / "atexit", stdout=write, stderr=subprocess.PIPE)
    finally:
        os.close(write)
    assert result.returncode == 120
    assert b"BrokenPipeError" in result.stderr
