"""Where the ripgrep binary is, and the flags that make it follow the walker's rules.

The `ripgrep` wheel installs `rg` next to the Python executable; that copy is preferred
over one on PATH (which may be a slow wrapper script).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.metadata as metadata
import os
import shutil
import sys
import sysconfig
from collections.abc import Iterator
from pathlib import Path

# ripgrep reads only the project's own .gitignore files, even outside a git repository,
# exactly as melgui.core.config.project_files does.
IGNORE_FLAGS: tuple[str, ...] = (
    "--no-config",
    "--no-ignore-parent",
    "--no-ignore-global",
    "--no-ignore-exclude",
    "--no-ignore-dot",
    "--no-require-git",
)

# Lines longer than this reach Python as a preview only; grep shows far fewer chars.
MAX_COLUMNS = 4096


@functools.cache
def find_ripgrep() -> str | None:
    """The path of an `rg` executable, or None when there is none."""
    for candidate in _candidates():  # the first that is one: the later ones cost more
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return None


def _candidates() -> Iterator[Path]:
    scripts = sysconfig.get_path("scripts")
    if scripts:
        yield Path(scripts) / "rg"
    yield Path(sys.executable).parent / "rg"
    # `pip install --target LIB` (melgui's install on a remote) puts scripts in LIB/bin.
    with contextlib.suppress(metadata.PackageNotFoundError):
        yield Path(str(metadata.distribution("ripgrep").locate_file(""))) / "bin" / "rg"
    on_path = shutil.which("rg")
    if on_path:
        yield Path(on_path)


def grep_argv(rg: str, pattern: str) -> list[str]:
    return [
        rg,
        *IGNORE_FLAGS,
        "--no-messages",
        "--null",
        "--line-number",
        "--with-filename",
        "--no-heading",
        "--color=never",
        "--encoding=none",
        f"--max-columns={MAX_COLUMNS}",
        "--max-columns-preview",
        "--regexp",
        pattern,
        ".",
    ]


def files_argv(rg: str, name_globs: list[str] | None = None) -> list[str]:
    """List files; `name_globs` pre-filters by file name as a file type does.

    A type, unlike `--glob`, never overrides .gitignore; it does let hidden files
    through, which the caller filters out again.
    """
    types: list[str] = []
    for glob in name_globs or ():
        types += ["--type-add", f"melguifind:{glob}"]
    if types:
        types += ["--type", "melguifind"]
    # One thread: listing (no file is read) is bound by directory reads, and rg's
    # parallel walker spends a quarter more CPU coordinating threads than it saves in
    # time on a tree of thousands of files (bench/bench_search.py).
    return [rg, *IGNORE_FLAGS, "--no-messages", *types, "--files", "--threads=1", "--null", "."]


def glob_files_argv(rg: str, globs: list[str]) -> list[str]:
    """List the files `globs` (`--glob` overrides, in order: the last that matches a
    path decides) let through; see rg_globs for the ones that keep .gitignore's rules."""
    overrides = [f"--glob={glob}" for glob in globs]
    # The rules come as overrides: rg reads no .gitignore itself (nor waits on one).
    return [
        rg, *IGNORE_FLAGS, "--no-ignore-vcs", "--no-messages", *overrides,
        "--files", "--threads=1", "--null", ".",
    ]  # fmt: skip
