"""Which functions and classes a change is in: a cheap parse, no language server.

Python files are parsed with `ast` (the worktree's own text, as it is now) and each hunk's
lines are mapped to the innermost `def` or `class` holding them ("Parser.parse"); other
languages keep git's hunk context (the function line git finds above each hunk). A
language server would know more, but it needs a running server per worktree; this costs
one parse per changed Python file, in the same thread as the git read.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path

SourceReader = Callable[[Path, str], str | None]  # (worktree folder, path) -> its text
MAX_SOURCE = 2_000_000  # bytes; a larger file keeps git's hunk context


def local_source(folder: Path, path: str) -> str | None:
    """The file's text on this machine; None when it is not there or too large."""
    file = folder / path
    try:
        if file.is_symlink() or file.stat().st_size > MAX_SOURCE:
            return None
        return file.read_text("utf-8", "replace")
    except OSError:
        return None


def symbols_of(text: str | None, hunks: Sequence[tuple[int, int]]) -> tuple[str, ...] | None:
    """The innermost definitions holding each hunk's new lines ((first line, count) of
    the worktree's file), in order; None when the text is missing or does not parse
    (then git's context stands)."""
    if text is None:
        return None
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    spans = list(_spans(tree.body, ""))
    names: dict[str, None] = {}
    for new_start, new_count in hunks:
        first = new_start if new_count else new_start + 1
        last = new_start + max(new_count, 1) - 1
        inside = [(start, name) for start, end, name in spans if start <= last and first <= end]
        for _start, name in sorted(inside):
            if not any(other.startswith(name + ".") for _s, other in inside):
                names[name] = None  # the innermost only
    return tuple(names)


def _spans(body: Iterable[ast.stmt], prefix: str) -> Iterable[tuple[int, int, str]]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            name = prefix + node.name
            start = min([node.lineno, *(d.lineno for d in node.decorator_list)])
            yield start, node.end_lineno or node.lineno, name
            yield from _spans(node.body, name + ".")
