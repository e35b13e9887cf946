"""A `git diff` as files and hunks, and the patch of any part of it.

`parse_diff` reads the output of `git diff --binary --full-index` (with the `a/` and `b/`
prefixes): per file its paths, status, header lines and hunks. `patch_of` gives back the
exact text `git apply` needs for a whole file or some of its hunks.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

Status = Literal["added", "modified", "deleted", "renamed"]

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@(.*)$")
_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}


@dataclass(frozen=True, slots=True)
class Hunk:
    header: str  # "@@ -3,7 +3,8 @@ def main():"
    old_start: int
    old_count: int
    new_start: int
    new_count: int
    lines: tuple[str, ...]  # " context", "-removed", "+added", "\\ No newline at end of file"

    @property
    def added(self) -> int:
        return sum(1 for line in self.lines if line.startswith("+"))

    @property
    def removed(self) -> int:
        return sum(1 for line in self.lines if line.startswith("-"))


@dataclass(frozen=True, slots=True)
class FileChange:
    path: str  # the path now (the old one for a deleted file)
    old_path: str  # the path at the base (equal to `path` unless renamed)
    status: Status
    binary: bool
    header: tuple[str, ...]  # "diff --git …" up to the first hunk (binary: the whole patch)
    hunks: tuple[Hunk, ...]
    uncommitted: bool = False  # some of it is not committed in the worktree yet

    @property
    def added(self) -> int:
        return sum(hunk.added for hunk in self.hunks)

    @property
    def removed(self) -> int:
        return sum(hunk.removed for hunk in self.hunks)

    @property
    def label(self) -> str:
        """What happened to the file, in one word ("binary" for any binary change)."""
        return "binary" if self.binary else self.status

    @property
    def paths(self) -> tuple[str, ...]:
        """Every path applying this change touches."""
        return (self.path,) if self.old_path == self.path else (self.old_path, self.path)


def patch_of(change: FileChange, hunks: Sequence[int] | None = None) -> str:
    """The patch of `change`, or of only the hunks at these indexes (in file order)."""
    chosen = change.hunks if hunks is None else [change.hunks[i] for i in sorted(set(hunks))]
    if change.binary and hunks is not None:
        raise ValueError("a binary change has no hunks to choose from")
    lines = list(change.header)
    for hunk in chosen:
        lines.append(hunk.header)
        lines.extend(hunk.lines)
    return "\n".join(lines) + "\n"


def parse_diff(text: str) -> list[FileChange]:
    """Every file of a `git diff` in order. Text before the first "diff --git" is ignored."""
    blocks: list[list[str]] = []
    for line in text.split("\n"):
        if line.startswith("diff --git "):
            blocks.append([line])
        elif blocks:
            blocks[-1].append(line)
    if blocks and blocks[-1] and blocks[-1][-1] == "":
        blocks[-1].pop()
    return [_file(block) for block in blocks]


def _file(block: list[str]) -> FileChange:
    start = next((i for i, line in enumerate(block) if line.startswith("@@ ")), len(block))
    header, body = block[:start], block[start:]
    old, new = _header_paths(header[0])
    status: Status = "modified"
    binary = False
    for line in header[1:]:
        if line.startswith("new file mode"):
            status = "added"
        elif line.startswith("deleted file mode"):
            status = "deleted"
        elif line.startswith("rename from "):
            old, status = _unquote(line[len("rename from ") :]), "renamed"
        elif line.startswith("rename to "):
            new = _unquote(line[len("rename to ") :])
        elif line.startswith("--- ") and line != "--- /dev/null":
            old = _strip_prefix(_unquote(_name(line)), "a/")
        elif line.startswith("+++ ") and line != "+++ /dev/null":
            new = _strip_prefix(_unquote(_name(line)), "b/")
        elif line.startswith(("Binary files ", "GIT binary patch")):
            binary = True
    if status == "added":
        old = new
    elif status == "deleted":
        new = old
    return FileChange(
        path=new,
        old_path=old,
        status=status,
        binary=binary,
        header=tuple(block) if binary else tuple(header),
        hunks=() if binary else tuple(_hunks(body)),
    )


def _name(line: str) -> str:
    """The name on a "---"/"+++" line: git ends it with a tab when it holds a space."""
    name = line[4:]
    return name[:-1] if name.endswith("\t") else name


def _hunks(body: Iterable[str]) -> list[Hunk]:
    hunks: list[Hunk] = []
    header = ""
    numbers: tuple[int, int, int, int] = (0, 0, 0, 0)
    lines: list[str] = []
    for line in body:
        match = _HUNK.match(line)
        if match is not None:
            if header:
                hunks.append(Hunk(header, *numbers, tuple(lines)))
            header, lines = line, []
            numbers = (
                int(match[1]),
                int(match[2]) if match[2] is not None else 1,
                int(match[3]),
                int(match[4]) if match[4] is not None else 1,
            )
        elif header:
            lines.append(line)
    if header:
        hunks.append(Hunk(header, *numbers, tuple(lines)))
    return hunks


def _header_paths(line: str) -> tuple[str, str]:
    """The two paths of "diff --git a/X b/Y" (quoted or not; X == Y unless renamed)."""
    rest = line[len("diff --git ") :]
    if rest.startswith('"') or rest.endswith('"'):
        names = _split_quoted(rest)
        if len(names) == 2:
            return _strip_prefix(names[0], "a/"), _strip_prefix(names[1], "b/")
    half = (len(rest) - 3) // 2
    if rest[half : half + 3] == " b/" and rest[2:half] == rest[half + 3 :]:
        name = rest[2:half]
        return name, name
    old, _, new = rest.partition(" b/")
    return _strip_prefix(old, "a/"), new


def _split_quoted(text: str) -> list[str]:
    names: list[str] = []
    index = 0
    while index < len(text):
        if text[index] == " ":
            index += 1
        elif text[index] == '"':
            end = index + 1
            while end < len(text) and text[end] != '"':
                end += 2 if text[end] == "\\" else 1
            names.append(_unquote(text[index : end + 1]))
            index = end + 1
        else:
            end = text.find(" ", index)
            end = len(text) if end < 0 else end
            names.append(text[index:end])
            index = end
    return names


def _unquote(text: str) -> str:
    """git's C-style quoting of unusual paths ("a/tab\\there", octal UTF-8 bytes) undone."""
    if not (len(text) >= 2 and text[0] == '"' and text[-1] == '"'):
        return text
    out = bytearray()
    body = text[1:-1]
    index = 0
    while index < len(body):
        char = body[index]
        if char != "\\":
            out.extend(char.encode("utf-8", "surrogateescape"))
            index += 1
            continue
        following = body[index + 1 : index + 2]
        if following.isdigit():
            out.append(int(body[index + 1 : index + 4], 8))
            index += 4
        else:
            out.extend(_ESCAPES.get(following, following).encode())
            index += 2
    return out.decode("utf-8", "surrogateescape")


def _strip_prefix(path: str, prefix: str) -> str:
    return path[len(prefix) :] if path.startswith(prefix) else path
