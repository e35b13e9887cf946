"""Temporary folders a benchmark removes when it exits.

A benchmark makes its sandbox (HOME, data folders) and projects (10,000-file
repositories, worktrees) under the system's temporary folder; left behind, a few rounds
of run_all.py filled the disk (75 GB in /tmp before this). `folder` makes one and
removes it at the interpreter's exit, however the benchmark ends short of a kill.

    import scratch
    home = scratch.folder("melgui-bench-")
"""

from __future__ import annotations

import atexit
import shutil
import tempfile


def folder(prefix: str, *, dir: str | None = None) -> str:
    """A new temporary folder, removed with all it holds when this process exits."""
    path = tempfile.mkdtemp(prefix=prefix, dir=dir)
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path
