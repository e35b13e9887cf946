"""The glob language of find_files.

`*` and `?` stay within one path component, `**` spans folders, `[abc]` and `{a,b}` work
as in a shell. A pattern without `/` matches a file's name at any depth (`*.py`); one
with `/` matches the whole path from the project root (`src/**/test_*.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from melgui.core.protocol.tooling import ToolError

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


def _translate(glob: str, in_records: bool) -> str:
    """The glob as a regex; `in_records` keeps every part inside one NUL-ended record."""
    segment = "[^/\x00]" if in_records else "[^/]"
    anything = "[^\x00]*" if in_records else ".*"
    out: list[str] = []
    i = 0
    n = len(glob)
    while i < n:
        char = glob[i]
        if glob.startswith("**", i):
            at_start = i == 0 or glob[i - 1] == "/"
            if at_start and glob.startswith("**/", i):
                out.append(f"(?:{segment}*/)*")
                i += 3
                continue
            if at_start and i + 2 == n:
                out.append(anything)
                i += 2
                continue
            out.append(f"{segment}*")
            i += 2
            continue
        if char == "*":
            out.append(f"{segment}*")
        elif char == "?":
            out.append(segment)
        elif char == "[":
            end = glob.find("]", i + 2)
            if end == -1:
                out.append(re.escape(char))
            else:
                body = glob[i + 1 : end].replace("\\", "\\\\")
                if body.startswith("!"):
                    body = "^" + body[1:]
                if body.startswith("^"):
                    body += "/\x00" if in_records else "/"
                out.append("[" + body + "]")
                i = end
        elif char == "\\" and i + 1 < n:
            i += 1
            out.append(re.escape(glob[i]))
        else:
            out.append(re.escape(char))
        i += 1
    return "".join(out)


def _drop_any_depth_prefix(glob: str) -> str:
    """`**/name` means `name` at any depth, which is what a bare name means."""
    while glob.startswith("**/") and "/" not in glob[3:]:
        glob = glob[3:]
    return glob


def _either(globs: list[str], in_records: bool) -> str:
    return "|".join(f"(?:{_translate(glob, in_records)})" for glob in globs)


class GlobMatcher:
    """One find_files pattern, compiled for single paths and for blocks of records."""

    def __init__(self, pattern: str) -> None:
        if "\x00" in pattern:
            raise ToolError("Glob pattern contains a NUL byte.")
        cleaned = pattern.strip()
        while cleaned.startswith("./"):
            cleaned = cleaned[2:]
        cleaned = cleaned.lstrip("/")
        if not cleaned:
            raise ToolError("Glob pattern is empty; try '**/*' or '*.py'.")
        alternatives = [_drop_any_depth_prefix(alt) for alt in expand_braces(cleaned)]
        by_name = [alt for alt in alternatives if "/" not in alt]
        by_path = [alt for alt in alternatives if "/" in alt]
        # ripgrep can pre-filter by file name itself (see `name_globs`): a superset.
        last_parts = [alt.rpartition("/")[2] for alt in alternatives]
        self.name_globs: list[str] | None = None
        if not any("**" in part or set(part) & set("[]{}\\:") for part in last_parts):
            self.name_globs = sorted(set(last_parts))
        # Listed with `name_globs` by ripgrep, a name-only pattern needs no second look.
        self.names_only = self.name_globs is not None and not by_path
        parts = []
        if by_name:
            parts.append(f"(?:[^\x00]*/)?(?:{_either(by_name, True)})")
        if by_path:
            parts.append(_either(by_path, True))
        try:
            self._name = re.compile(_either(by_name, False) + r"\Z") if by_name else None
            self._path = re.compile(_either(by_path, False) + r"\Z") if by_path else None
            # Records are "./path\0"; a match starts right after a NUL (or at 0), and no
            # name in it is hidden, whichever engine listed it.
            self._records = re.compile(
                r"(?<![^\x00])(\./(?!(?:[^\x00]*/)?\.)(?:" + "|".join(parts) + r"))(?=\x00)"
            )
        except re.error as exc:
            raise ToolError(f"Invalid glob pattern {pattern!r}: {exc}.") from None

    def matches(self, relative: str) -> bool:
        if self._name is not None and self._name.match(relative.rpartition("/")[2]):
            return True
        return self._path is not None and self._path.match(relative) is not None

    def select_records(self, block: bytes) -> list[bytes]:
        """The matching "./path" records of a block of "./path\\0" records."""
        text = block.decode("utf-8", errors="surrogateescape")
        return [
            found.encode("utf-8", errors="surrogateescape") for found in self._records.findall(text)
        ]


def select_listed_records(block: bytes) -> list[bytes]:
    """The "./path" records of a block already filtered by name, hidden ones dropped."""
    records = block.split(b"\x00")
    records.pop()  # the block ends with a separator
    if b"/." in block:
        records = [record for record in records if b"/." not in record]
    return records


def compile_glob(pattern: str) -> Callable[[str], bool]:
    """A predicate on relative POSIX paths; a malformed pattern is a ToolError."""
    return GlobMatcher(pattern).matches
