"""Which files are the project's, in pure Python: the one walker.

Rules (the ones `melgui.tools.search.ripgrep` asks ripgrep for): hidden names are skipped,
symlinks are not followed, `.gitignore` files in the project apply (deeper ones win,
`!` re-includes, an ignored folder is not entered), nothing above the project root and
no global or `.git/info/exclude` rules count. The Python search engine (grep and
find_files without ripgrep) and a small local model's list of the project's files both
walk with it.
"""

from __future__ import annotations

import os
from collections.abc import Iterator

from melgui.core.config.gitignore import IgnoreFile
from melgui.core.config.special_files import read_rules

Layer = tuple[str, IgnoreFile]  # (folder relative to the root, "" for the root; its rules)


def _load_ignore(folder: str, notes: list[str] | None) -> IgnoreFile | None:
    """The folder's `.gitignore` rules; one that is a FIFO, a device, a link to one or
    over the size cap is skipped (with a note), never waited on."""
    rules = read_rules(os.path.join(folder, ".gitignore"))
    if rules.note is not None and notes is not None:
        notes.append(rules.note)
    return IgnoreFile.parse(rules.text) if rules.text else None


def _ignored(layers: list[Layer], relative: str, is_dir: bool) -> bool:
    for base, rules in reversed(layers):
        inner = relative[len(base) + 1 :] if base else relative
        verdict = rules.verdict(inner, is_dir)
        if verdict is not None:
            return verdict
    return False


class TooManyEntries(Exception):
    """The walk looked at more entries than it was allowed to (`max_entries`)."""


def walk_files(
    root: str,
    skip_dirs: frozenset[str] = frozenset(),
    max_entries: int | None = None,
    notes: list[str] | None = None,
) -> Iterator[str]:
    """Relative POSIX paths of the project's searchable regular files, in a stable order.

    Folders named in `skip_dirs` are not entered. With `max_entries`, the walk raises
    TooManyEntries once it has looked at more folder entries than that (a tree of empty
    folders ends it as surely as many files). `notes` gets one line for each `.gitignore`
    skipped because it is not a regular file (a FIFO, a device, a link to one).
    """
    budget = max_entries
    stack: list[tuple[str, str, list[Layer]]] = [(root, "", [])]
    while stack:
        folder, relative, layers = stack.pop()
        rules = _load_ignore(folder, notes)
        if rules is not None and not rules.empty:
            layers = [*layers, (relative, rules)]
        try:
            with os.scandir(folder) as scan:
                entries = sorted(scan, key=lambda entry: entry.name)
        except OSError:
            continue
        if budget is not None:
            budget -= len(entries)
            if budget < 0:
                raise TooManyEntries(f"more than {max_entries} entries under {root}")
        subfolders: list[tuple[str, str, list[Layer]]] = []
        for entry in entries:
            if entry.name.startswith("."):
                continue
            child = f"{relative}/{entry.name}" if relative else entry.name
            try:
                if entry.is_symlink():
                    continue
                if entry.is_dir(follow_symlinks=False):
                    if entry.name not in skip_dirs and not _ignored(layers, child, True):
                        subfolders.append((entry.path, child, layers))
                elif entry.is_file(follow_symlinks=False) and not _ignored(layers, child, False):
                    yield child
            except OSError:
                continue
        stack.extend(reversed(subfolders))
