"""The glob language of find_files (wcmatch's glob, bracex's braces).

`*` and `?` stay within one path component, `**` spans folders, `[abc]`, `[!abc]` and
`{a,b}` (also `{1..3}`) work as in a shell. A pattern without `/` matches a file's name
at any depth (`*.py`); one with `/` matches the whole path from the project root
(`src/**/test_*.py`).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from melgui.core.protocol.tooling import ToolError
from melgui.tools.search.rg_globs import PatternGlobs, pattern_globs

_MAX_ALTERNATIVES = 256
# GLOBSTAR: `**` spans folders; FORCEUNIX: `/` separates, `\` escapes, on every system
# (the paths are POSIX ones); DOTGLOB: no special case for hidden names, which never
# reach the matcher (`_hidden`).
# wcmatch and bracex are imported when a pattern is first compiled, not at every start.


def _flags() -> int:
    from wcmatch import glob as wcglob

    return wcglob.GLOBSTAR | wcglob.FORCEUNIX | wcglob.DOTGLOB


def expand_braces(pattern: str) -> list[str]:
    """`a{b,c}d` → [`abd`, `acd`], nested braces included; unbalanced braces stay literal."""
    import bracex

    try:
        return bracex.expand(pattern, keep_escapes=True, limit=_MAX_ALTERNATIVES)
    except bracex.ExpansionLimitException:
        raise ToolError("Glob pattern expands to too many alternatives.") from None


def _drop_any_depth_prefix(glob: str) -> str:
    """`**/name` means `name` at any depth, which is what a bare name means."""
    while glob.startswith("**/") and "/" not in glob[3:]:
        glob = glob[3:]
    return glob


def _plain_regex(glob: str) -> str | None:
    """The regex of a glob made of literal names, `*`, `?` and `**` components, for the
    paths the matcher sees (relative, normalised: no empty, "." or ".." component);
    None for anything else (classes, escapes, stray slashes), left to wcmatch.

    wcmatch's own regex guards every character against "." and ".." components, which
    such paths never have: on a listing of thousands of paths, that guard is most of
    find_files' cost.
    """
    parts = glob.split("/")
    if set(glob) & set("[]\\") or "" in parts:
        return None
    pieces = []
    for index, part in enumerate(parts):
        if part == "**":  # any number of folders; at the end, anything below
            pieces.append(".*" if index == len(parts) - 1 else "(?:[^/]*/)*")
            continue
        pieces.append("".join(_PLAIN.get(char) or re.escape(char) for char in part))
        if index < len(parts) - 1:
            pieces.append("/")
    return f"^(?s:{''.join(pieces)})$"


_PLAIN = {"*": "[^/]*", "?": "[^/]"}


def _compile(globs: list[str]) -> re.Pattern[str] | None:
    if not globs:
        return None
    plain = [_plain_regex(glob) for glob in globs]
    if all(regex is not None for regex in plain):
        return re.compile("|".join(regex for regex in plain if regex is not None))
    from wcmatch import glob as wcglob

    regexes, _ = wcglob.translate(globs, flags=_flags())
    return re.compile("|".join(regexes))


def _record_test(by_name: list[str], by_path: list[str]) -> Callable[[str], object] | None:
    """One regex deciding a whole "./path" record, when every alternative is plain: its
    `match`, or, when every alternative may start at any depth (a name, `**/…`), the
    `search` of "/" + the rest, which scans at C speed to each "/" instead of trying
    every split of the record into folders."""
    anywhere = list(by_name)
    for glob in by_path:
        if not glob.startswith("**/"):
            anywhere = []
            break
        anywhere.append(glob[3:])
    if anywhere:
        tails = [_plain_regex(glob) for glob in anywhere]
        if None not in tails:
            # ^(?s:body)$ each; every "/" of "./path" starts a component.
            bodies = [regex[1:-1] for regex in tails if regex is not None]
            return re.compile(rf"/(?:{'|'.join(bodies)})$").search
    names = [_plain_regex(glob) for glob in by_name]
    paths = [_plain_regex(glob) for glob in by_path]
    if None in names or None in paths:
        return None
    # ^(?s:body)$ each: a name may sit below any folders, a path starts at the top.
    bodies = [f"(?:[^/]*/)*{regex[1:-1]}" for regex in names if regex is not None]
    bodies += [regex[1:-1] for regex in paths if regex is not None]
    return re.compile(rf"^\./(?:{'|'.join(bodies)})$").match


def _hidden(relative: str) -> bool:
    return relative.startswith(".") or "/." in relative


class GlobMatcher:
    """One find_files pattern, for single paths and for blocks of listed records."""

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
        # Or ripgrep matches the whole pattern itself (`--glob`, see rg_globs).
        self.rg_globs: PatternGlobs | None = pattern_globs(alternatives)
        # wcmatch's `**` is slow (it guards each character against `.` and `..` names):
        # a path pattern first checks the name on its own where that is a plain glob.
        path_names = [alt.rpartition("/")[2] for alt in by_path]
        try:
            self._name = _compile(by_name)
            self._path = _compile(by_path)
            self._path_name = None if any("**" in n for n in path_names) else _compile(path_names)
            self._record = _record_test(by_name, by_path)
        except (re.error, ValueError) as exc:
            raise ToolError(f"Invalid glob pattern {pattern!r}: {exc}.") from None

    def matches(self, relative: str) -> bool:
        name = relative.rpartition("/")[2]
        if self._name is not None and self._name.match(name):
            return True
        if self._path is None:
            return False
        if self._path_name is not None and not self._path_name.match(name):
            return False
        return self._path.match(relative) is not None

    def select_records(self, block: bytes) -> list[bytes]:
        """The matching "./path" records of a block of "./path\\0" records, none hidden."""
        # Decoded, split and encoded again at once; surrogateescape keeps the bytes.
        text = block.decode("utf-8", errors="surrogateescape")
        records = text.split("\x00")
        records.pop()  # the block ends with a separator
        if self._record is not None:  # one regex per record; "./" + a hidden name has "/."
            match = self._record
            hidden = "/." in text
            kept = [r for r in records if match(r) and not (hidden and "/." in r)]
        else:
            matches = self.matches
            kept = [r for r in records if not _hidden(p := r.removeprefix("./")) and matches(p)]
        if not kept:
            return []
        return "\x00".join(kept).encode("utf-8", errors="surrogateescape").split(b"\x00")


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
