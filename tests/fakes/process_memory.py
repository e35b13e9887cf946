"""Resident memory of this process from /proc (Linux), for bounded-memory tests."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import IO


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError(f"/proc/self/status has no {field}")


def rss_bytes() -> int:
    return _status_kb("VmRSS") * 1024


def reset_peak() -> None:
    """Reset VmHWM where the kernel allows it; otherwise the old peak stays (safe side)."""
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def peak_rss_bytes() -> int:
    """The highest resident size so far (since the last successful reset_peak)."""
    return _status_kb("VmHWM") * 1024


# Started fresh, this small launcher runs the command and reports the kernel's reading
# for it. A child's ru_maxrss begins at the high-water mark of the address space its exec
# replaces, which for a child of pytest is pytest's own (hundreds of MB late in a long
# run); the launcher's is a few MB, so the reading is the command's own.
_LAUNCHER = r"""import os, sys
pid = os.posix_spawn(sys.argv[2], sys.argv[2:], os.environ)
with open(sys.argv[1], "w") as report:
    report.write(f"{pid}\n")
    report.flush()
    _, status, usage = os.wait4(pid, 0)
    report.write(f"{os.waitstatus_to_exitcode(status)} {usage.ru_maxrss * 1024}\n")
"""


def run_measured(
    argv: list[str], env: dict[str, str], stdout: IO[bytes], stderr: IO[bytes], bound: float
) -> tuple[int, int]:
    """Run `argv` to its end (killed past `bound` seconds): its exit status and its own
    peak resident size (the kernel's ru_maxrss, not inherited from this process), in
    bytes."""
    with tempfile.TemporaryDirectory() as folder:
        report = Path(folder, "report")
        launcher = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _LAUNCHER, str(report), *argv],
            stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, env=env,
            start_new_session=True,
        )  # fmt: skip
        try:
            launcher.wait(bound)
        except subprocess.TimeoutExpired:
            os.kill(int(report.read_text().split()[0]), signal.SIGKILL)  # the launcher reports
            launcher.wait()
        _pid, code, peak = report.read_text().split()
        return int(code), int(peak)
