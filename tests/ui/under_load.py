"""Run the window tests N times in a row under a CPU hog, and log each run.

    python -m tests.ui.under_load [--runs 10] [--log ui-under-load.log] [--target tests/ui]
                                  [PYTEST ARGS...]

The hog is two busy processes (`python -c 'while True: pass'`), started before the first
run and killed after the last, or when this script fails or is interrupted. Each run is
`python -m pytest -q TARGET PYTEST ARGS`; the log gets, per run, the load average at
its start, its time, pytest's summary line and its FAILED/ERROR lines, and the whole
output of a run that failed goes to a file beside the log (`LOG.runN.txt`), and the
waits on a condition that used more than 30% of their timeout are named (all of a run's
waits over half a second are in `LOG.runN.waits.tsv`). Exits 1 if any run failed.

A test that passes on a quiet machine and fails here waits on time, not state (a fixed
sleep, a timeout that is too short under load, an assert right after an action).
"""

from __future__ import annotations

import argparse
import contextlib
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from pathlib import Path
from types import FrameType

HOG = "while True: pass"
SUMMARY = re.compile(r"\b(passed|failed|errors?|deselected|no tests ran)\b.* in [\d.]+s")
AT_RISK = 0.3  # a wait that took more of its timeout than this is named in the log


@contextmanager
def cpu_hog(processes: int) -> Iterator[list[subprocess.Popen[bytes]]]:
    """`processes` busy Python processes, killed on the way out whatever happens."""
    hogs: list[subprocess.Popen[bytes]] = []
    try:
        for _ in range(processes):
            hogs.append(subprocess.Popen([sys.executable, "-c", HOG]))
        yield hogs
    finally:
        for hog in hogs:
            hog.kill()
        for hog in hogs:
            hog.wait()


def _stop_on_sigterm(signum: int, frame: FrameType | None) -> None:
    raise SystemExit(128 + signum)  # unwinds through cpu_hog's finally


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%d %H:%M:%S UTC")


def _load() -> str:
    one, five, fifteen = os.getloadavg()
    return f"{one:.2f} {five:.2f} {fifteen:.2f}"


def _commit() -> str:
    """The commit the run tests, with "+changes" if the tree differs from it."""
    try:
        head = subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        changed = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            capture_output=True,
            text=True,
            check=True,
        ).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return "(no git)"
    return f"{head}+changes" if changed else head


def one_run(number: int, target: str, pytest_args: Sequence[str], log: Path) -> bool:
    """One `pytest TARGET` run, echoed as it goes; its summary appended to `log`."""
    command = [sys.executable, "-m", "pytest", "-q", target, *pytest_args]
    started = time.monotonic()
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n## run {number}  {_now()}  load {_load()}  at {_commit()}\n")
    waits = _waits_of(log, number)
    waits.unlink(missing_ok=True)
    env = {**os.environ, "MELGUI_WAIT_LOG": str(waits.resolve())}
    process = subprocess.Popen(  # its own process group: the apps its tests start go with it
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
        env=env,
        start_new_session=True,
    )
    lines: list[str] = []
    assert process.stdout is not None
    try:
        for line in process.stdout:
            sys.stdout.write(line)
            lines.append(line)
        code = process.wait()
    finally:
        if process.poll() is None:  # stopped from outside: no pytest, nor its apps, left
            with contextlib.suppress(ProcessLookupError):
                os.killpg(process.pid, signal.SIGKILL)
            process.wait()
    took = time.monotonic() - started
    summary = next(
        (line.strip() for line in reversed(lines) if SUMMARY.search(line)), "(no summary)"
    )  # warnings printed at exit may follow pytest's own last line
    failures = [
        line.rstrip()
        for line in lines
        if line.startswith("FAILED ") or (line.startswith("ERROR ") and "::" in line)
    ]
    with log.open("a", encoding="utf-8") as out:
        out.write(f"exit {code}  {took:.0f} s  load at the end {_load()}\n{summary}\n")
        out.writelines(f"{failure}\n" for failure in failures)
        out.writelines(f"  wait {line}\n" for line in closest_waits(waits))
        if code != 0:
            full = log.with_name(f"{log.name}.run{number}.txt")
            full.write_text("".join(lines), encoding="utf-8")
            out.write(f"whole output: {full}\n")
    return code == 0


def _waits_of(log: Path, number: int) -> Path:
    return log.with_name(f"{log.name}.run{number}.waits.tsv")


def closest_waits(waits: Path, share: float = AT_RISK) -> list[str]:
    """The waits of a run that used more than `share` of their timeout, the closest first
    (tests/fakes/wait_log.py writes them)."""
    if not waits.exists():
        return []
    rows = [line.split("\t") for line in waits.read_text(encoding="utf-8").splitlines()]
    risky = sorted((r for r in rows if float(r[0]) > share), key=lambda r: -float(r[0]))
    return [f"{r[0]} of {r[2]} s ({r[1]} s) {r[3]} at {r[4]} in {r[5]}" for r in risky]


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--runs", type=int, default=10, help="runs in a row (10)")
    parser.add_argument("--hog", type=int, default=2, help="busy processes (2)")
    parser.add_argument("--log", type=Path, default=Path("ui-under-load.log"))
    parser.add_argument("--target", default="tests/ui", help="what pytest runs (tests/ui)")
    args, pytest_args = parser.parse_known_args(argv)
    signal.signal(signal.SIGTERM, _stop_on_sigterm)
    log: Path = args.log
    log.parent.mkdir(parents=True, exist_ok=True)  # a new folder for the logs of a session
    command = " ".join(["python -m pytest -q", args.target, *pytest_args])
    with log.open("a", encoding="utf-8") as out:
        out.write(
            f"# {_now()}: {args.runs} runs of `{command}` under {args.hog} busy processes"
            f" ({os.cpu_count()} cores)\n"
        )
    passed = 0
    with cpu_hog(args.hog):
        for number in range(1, args.runs + 1):
            passed += one_run(number, args.target, pytest_args, log)
    closest = sorted(
        (line for n in range(1, args.runs + 1) for line in closest_waits(_waits_of(log, n))),
        key=lambda line: -float(line.split(" ", 1)[0]),
    )
    with log.open("a", encoding="utf-8") as out:
        out.write(f"\n# {_now()}: {passed} of {args.runs} runs passed\n")
        out.writelines(f"# closest wait: {line}\n" for line in closest[:10])
    print(f"{passed} of {args.runs} runs passed; log: {log}")
    return 0 if passed == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
