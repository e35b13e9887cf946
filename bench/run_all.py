"""Run every benchmark in bench/ and print their reports, then one table of every
measurement with its target (bench/budget.py).

    python bench/run_all.py              # each benchmark once
    python bench/run_all.py --repeat 3   # three times: the table shows medians; a row is
                                         # met when the median is within target and
                                         # no run misses it by more than 10%
    python bench/run_all.py chat panes   # only benchmarks whose file name has these words

Before each benchmark the machine's load average is taken, and how many cores other
processes keep busy for a second: the table shows both beside the benchmark's rows. A
row a benchmark should have reported (budget.EXPECTED_ROWS) and did not, because it
crashed or stopped early, is shown as missing and MISSED.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import IO

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from budget import (  # noqa: E402
    BEFORE_ENV,
    EXPECTED_ROWS,
    MISSED_EXIT,
    TABLE_ENV,
    Row,
    cores_busy,
    machine,
    missed,
    missing_row,
    read_rows,
    table,
)


def _echo(stream: IO[str], last: collections.deque[str]) -> None:
    """Show a benchmark's stderr as it comes, keeping its last lines (a crash's reason)."""
    for line in stream:
        sys.stderr.write(line)
        sys.stderr.flush()
        if line.strip() and "propagateSizeHints" not in line:
            last.append(line.strip())


def run_one(script: Path, rows_file: str) -> tuple[list[Row], str]:
    """Run `script`; its rows, plus a missing row for each expected one it did not
    report; and "" or why it failed."""
    already = len(read_rows(rows_file))
    os.environ.pop(BEFORE_ENV, None)
    before = {"load": os.getloadavg()[0], "busy": cores_busy(1.0)}
    env = {**os.environ, TABLE_ENV: rows_file, BEFORE_ENV: json.dumps(before)}
    last: collections.deque[str] = collections.deque(maxlen=3)
    process = subprocess.Popen(
        [sys.executable, str(script)], cwd=HERE.parent, env=env, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    echo = threading.Thread(target=_echo, args=(process.stderr, last), daemon=True)
    echo.start()
    try:
        code = process.wait()
    except KeyboardInterrupt:  # stopped: the benchmark goes too, the table is printed
        process.terminate()  # it may have children of its own to end
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        raise
    echo.join(5)
    process.stderr.close()
    rows = read_rows(rows_file)[already:]
    failure = ""
    if code not in (0, MISSED_EXIT):
        failure = f"crashed: exit {code}" + (f": {last[-1]}" if last else "")
    reported = {row.name for row in rows}
    os.environ[BEFORE_ENV] = json.dumps(before)  # the missing rows stand beside the same load
    for name in EXPECTED_ROWS.get(script.name, ()):
        if name not in reported:
            rows.append(missing_row(name, failure or f"not reported; exit {code}"))
    os.environ.pop(BEFORE_ENV, None)
    return rows, failure


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=1, help="run everything N times")
    parser.add_argument("only", nargs="*", help="words a benchmark's file name must contain")
    options = parser.parse_args(argv)
    scripts = [
        script
        for script in sorted(HERE.glob("bench_*.py"))
        if not options.only or any(word in script.name for word in options.only)
    ]
    failed: list[str] = []
    rows: list[Row] = []
    handle, rows_file = tempfile.mkstemp(prefix="melgui-bench-", suffix=".jsonl")
    os.close(handle)
    started = machine()
    try:
        _rounds(options.repeat, scripts, rows_file, rows, failed)
    except KeyboardInterrupt:
        print("\n(stopped: the table holds the runs that finished)")
    finally:
        os.unlink(rows_file)
    print("\n=== the frame-budget table (stalls in frames of 16.7 ms) ===")
    print(f"machine: {started} at the start, {machine().split(', ')[1]} at the end")
    print(table(rows) if rows else "(no benchmark reported a row)")
    missed_rows = missed(rows)
    if failed:
        print(f"\nfailed: {', '.join(sorted(set(failed)))}")
    return 1 if failed else (MISSED_EXIT if missed_rows else 0)


def _rounds(
    repeat: int, scripts: list[Path], rows_file: str, rows: list[Row], failed: list[str]
) -> None:
    """Every script `repeat` times, round by round; a round's table after it."""
    for round_number in range(1, repeat + 1):
        for script in scripts:
            label = f" (round {round_number})" if repeat > 1 else ""
            print(f"\n=== {script.name}{label} ===", flush=True)
            got, failure = run_one(script, rows_file)
            rows += got
            if failure:
                failed.append(f"{script.name} ({failure})")
        if round_number < repeat:  # a run stopped later still has a table
            print(f"\n=== the table after round {round_number} ===\n{table(rows)}", flush=True)


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, signal.default_int_handler)  # `kill` prints the table too
    raise SystemExit(main(sys.argv[1:]))
