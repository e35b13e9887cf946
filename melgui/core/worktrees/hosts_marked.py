"""The hosts this machine's windows made workers' worktrees on, so a window's next start
asks those hosts (and no other) for the worktrees a closed window left there.

A host is marked when a worktree is made there and unmarked once it has none left, in
melgui's data folder (`hosts-with-worktrees.json`, a list of host names).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from melgui.core.config.settings import data_dir

FILE = "hosts-with-worktrees.json"


def _path() -> Path:
    return data_dir() / FILE


def marked() -> list[str]:
    """The hosts marked ([] when none, or the file cannot be read)."""
    try:
        names = json.loads(_path().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []


def _write(names: list[str]) -> None:
    path = _path()
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_suffix(".tmp")
        partial.write_text(json.dumps(sorted(set(names))), encoding="utf-8")
        os.replace(partial, path)
    except OSError:
        pass  # only a hint for the next start: without it, that host is not asked


def mark(name: str) -> None:
    names = marked()
    if name not in names:
        _write([*names, name])


def unmark(name: str) -> None:
    names = marked()
    if name in names:
        _write([n for n in names if n != name])
