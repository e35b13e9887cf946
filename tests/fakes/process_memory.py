"""Resident memory of this process from /proc (Linux), for bounded-memory tests."""

from __future__ import annotations

import contextlib
from pathlib import Path


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
