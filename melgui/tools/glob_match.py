"""The glob language of find_files.

`*` and `?` stay within one path component, `**` spans folders, `[abc]` and `{a,b}` work
as in a shell. A pattern without `/` matches a file's name at any depth (`*.py`); one
with `/` matches the whole path from the project root (`src/**/test_*.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from melgui.core.tooling import ToolError

_MAX_ALTERNATIVES = 256


def expand_braces(pattern: str) -> list[str]:
    """`a{b,c}d` → [`abd`, `acd`], nested braces included; unbalanced braces stay literal."""
    depth = 0
    start = -1
    for index, char in enumerate(pattern):
        if char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                inner = pattern[start + 1 : index]
                options = _split_top_level(inner)
                if len(options) < 2:
                    continue
                results: list[str] = []
                for option in options:
                    results.extend(expand_braces(pattern[:start] + option + pattern[index + 1 :]))
                    if len(results) > _MAX_ALTERNATIVES:
                        raise ToolError("Glob pattern expands to too many alternatives.")
                return results
    return [pattern]


def _split_top_level(text: str) -> list[str]:
    parts: list[str] = []
    depth = 0
    current: list[str] = []
    for char in text:
        if char == "," and depth == 0:
            parts.append("".join(current))
            current = []
            continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        current.append(char)
    parts.append("".join(current))
    return parts


def _translate(glob: str) -> str:
    out: list[str] = []
    i = 0
    n = len(glob)
    while i < n:
        char = glob[i]
        if glob.startswith("**", i):
            at_start = i == 0 or glob[i - 1] == "/"
            if at_start and glob.startswith("**/", i):
                out.append("(?:[^/]*/)*")
                i += 3
                continue
            if at_start and i + 2 == n:
                out.append(".*")
                i += 2
                continue
            out.append("[^/]*")
            i += 2
            continue
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[i + 1 : end]
                if body.startswith("!"):
                    body = "^" + body[1:]
                out.append("[" + body.replace("\\", "\\\\") + "]")
                i = end
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def compile_glob(pattern: str) -> Callable[[str], bool]:
    """A predicate on relative POSIX paths; a malformed pattern is a ToolError."""
    if "\x00" in pattern:
        raise ToolError("Glob pattern contains a NUL byte.")
    cleaned = pattern.strip()
    while cleaned.startswith("./"):
        cleaned = cleaned[2:]
    cleaned = cleaned.lstrip("/")
    if not cleaned:
        raise ToolError("Glob pattern is empty; try '**/*' or '*.py'.")
    alternatives = expand_braces(cleaned)
    by_name = [alt for alt in alternatives if "/" not in alt]
    by_path = [alt for alt in alternatives if "/" in alt]
    try:
        name_re = (
            re.compile("|".join(f"(?:{_translate(a)})" for a in by_name) + r"\Z")
            if by_name
            else None
        )
        path_re = (
            re.compile("|".join(f"(?:{_translate(a)})" for a in by_path) + r"\Z")
            if by_path
            else None
        )
    except re.error as exc:
        raise ToolError(f"Invalid glob pattern {pattern!r}: {exc}.") from None

    def matches(relative: str) -> bool:
        if name_re is not None and name_re.match(relative.rpartition("/")[2]):
            return True
        return path_re is not None and path_re.match(relative) is not None

    return matches
