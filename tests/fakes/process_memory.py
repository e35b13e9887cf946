"""Resident memory of this process from /proc (Linux), for bounded-memory tests."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
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


def run_measured(
    argv: list[str], env: dict[str, str], stdout: IO[bytes], stderr: IO[bytes], bound: float
) -> tuple[int, int]:
    """Run `argv` to its end (killed past `bound` seconds): its exit status and the
    kernel's peak resident size for it (ru_maxrss), in bytes."""
    child = subprocess.Popen(argv, stdout=stdout, stderr=stderr, stdin=subprocess.DEVNULL, env=env)
    deadline = time.monotonic() + bound
    while True:
        pid, status, usage = os.wait4(child.pid, os.WNOHANG)
        if pid:
            break
        if time.monotonic() > deadline:
            child.kill()
            pid, status, usage = os.wait4(child.pid, 0)
            break
        time.sleep(0.05)
    child.returncode = os.waitstatus_to_exitcode(status)
    return child.returncode, usage.ru_maxrss * 1024
