"""Run every benchmark in bench/ and print their reports, then one table of every
measurement with its target (bench/budget.py).

    python bench/run_all.py              # each benchmark once
    python bench/run_all.py --repeat 3   # three times: the table shows medians
    python bench/run_all.py chat panes   # only benchmarks whose file name has these words
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from budget import TABLE_ENV, machine, read_rows, table  # noqa: E402


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
    failed = []
    handle, rows_file = tempfile.mkstemp(prefix="melgui-bench-", suffix=".jsonl")
    os.close(handle)
    env = {**os.environ, TABLE_ENV: rows_file}
    started = machine()
    try:
        for round_number in range(1, options.repeat + 1):
            for script in scripts:
                label = f" (round {round_number})" if options.repeat > 1 else ""
                print(f"\n=== {script.name}{label} ===", flush=True)
                result = subprocess.run([sys.executable, str(script)], cwd=HERE.parent, env=env)
                if result.returncode != 0:
                    failed.append(script.name)
        rows = read_rows(rows_file)
    finally:
        os.unlink(rows_file)
    print("\n=== the frame-budget table (stalls in frames of 16.7 ms) ===")
    print(f"machine: {started} at the start, {machine().split(', ')[1]} at the end")
    print(table(rows) if rows else "(no benchmark reported a row)")
    if failed:
        print(f"\nfailed: {', '.join(sorted(set(failed)))}")
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
