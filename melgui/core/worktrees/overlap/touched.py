"""What one worker's worktree changed against its base, file by file and hunk by hunk:
commits, uncommitted edits and untracked files git does not ignore.

Two git calls, run through the git runner given (the local one by default, so a worktree
on another host can plug in its own): `git diff -U0 <base>` for the hunks of tracked
files, and `git ls-files --others --exclude-standard` for new files. Blocking: call it
in a thread.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from melgui.core.worktrees.git import run_git
from melgui.core.worktrees.model import Worktree
from melgui.core.worktrees.overlap.symbols import SourceReader, local_source, symbols_of

GitRun = Callable[[Sequence[str], Path], str]  # (git arguments, folder) -> stdout

_HUNK = re.compile(r"^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@ ?(.*)$")
_DEFINITION = re.compile(
    r"^(?:(?:export|pub|public|private|protected|static|async|default)\s+)*"
    r"(?:def|class|func|fn|function|struct|impl|interface|trait|enum|module|sub)\s+"
    r"([\w.$]+)"
)
_C_LIKE = re.compile(r"^[\w:<>*&\s]+?\b([A-Za-z_]\w*)\s*\([^;]*$")  # "int main(void) {"
_ESCAPES = {"a": "\a", "b": "\b", "t": "\t", "n": "\n", "v": "\v", "f": "\f", "r": "\r"}


def local_git(args: Sequence[str], folder: Path) -> str:
    """git on this machine, never writing the index. Not niced: an overlap is shown while
    it matters, and on a busy machine a niced git waits behind everything else."""
    return run_git(["-c", "core.quotePath=false", *args], folder, nice=False)


@dataclass(frozen=True, slots=True)
class Hunk:
    """One changed region. `start`/`count` are the base's lines it replaces (count 0: an
    insertion after line `start`); `new_start`/`new_count` the worktree's lines."""

    start: int
    count: int
    new_start: int
    new_count: int
    context: str = ""  # git's function line for the hunk (the hunk header's tail)

    def base_lines(self) -> str:
        """ "lines 3–5", "line 3", "after line 3" (of the base)."""
        if self.count == 0:
            return f"after line {self.start}" if self.start else "at the top"
        if self.count == 1:
            return f"line {self.start}"
        return f"lines {self.start}–{self.start + self.count - 1}"


@dataclass(frozen=True, slots=True)
class FileTouch:
    """One changed file: `status` A added, M modified, D deleted, ? new and untracked,
    B binary (changed, no lines to compare)."""

    path: str
    status: str
    hunks: tuple[Hunk, ...] = ()
    symbols: tuple[str, ...] = ()  # functions and classes its hunks are in

    @property
    def whole(self) -> bool:
        """The file as a whole is the change (new, deleted or binary): any other change
        to it conflicts."""
        return self.status in ("A", "D", "?", "B")


# The files a reading the host sends lists; the rest are counted (`more`), so a worktree
# with a huge number of changes (a generated tree, a vendored folder) sends a bounded record.
FILES_MAX = 1000


@dataclass(frozen=True, slots=True)
class Touched:
    """Every file a worktree changed against `base` (paths relative to the worktree).
    `more`: changed files not listed in `files` (a reading cut at FILES_MAX by the host)."""

    base: str
    files: dict[str, FileTouch] = field(default_factory=dict)
    more: int = 0

    @property
    def count(self) -> int:
        """How many files it changed, listed or not."""
        return len(self.files) + self.more


def touched_to_json(touched: Touched, limit: int = FILES_MAX) -> dict[str, Any]:
    """{base, files: [[path, status, [[start, count, new_start, new_count, context]],
    [symbol]]], more?}: a reading as the melgui host sends it to its views, its first
    `limit` files (git's order: tracked changes by path, then new files) and `more`, the
    count of the rest, when there are more."""

    def hunks(touch: FileTouch) -> list[list[Any]]:
        return [[h.start, h.count, h.new_start, h.new_count, h.context] for h in touch.hunks]

    listed = list(touched.files.values())[:limit]
    files = [[t.path, t.status, hunks(t), list(t.symbols)] for t in listed]
    more = touched.more + len(touched.files) - len(listed)
    return {"base": touched.base, "files": files, **({"more": more} if more else {})}


def touched_from_json(data: Any) -> Touched:
    """A reading the host sent (`touched_to_json`); ValueError for what is not one."""
    try:
        files = {}
        for path, status, hunks, symbols in data["files"]:
            found = tuple(Hunk(int(a), int(b), int(c), int(d), str(e)) for a, b, c, d, e in hunks)
            files[str(path)] = FileTouch(str(path), str(status), found, tuple(map(str, symbols)))
        more = int(data.get("more", 0))
        if more < 0:
            raise ValueError(f"more is {more}")
        return Touched(str(data["base"]), files, more)
    except (AttributeError, KeyError, TypeError, ValueError) as exc:
        raise ValueError(f"not a worktree's reading: {exc}") from exc


def read_touched(
    worktree: Worktree,
    git: GitRun = local_git,
    source: SourceReader | None = local_source,
) -> Touched:
    """What `worktree` changed against its base; GitError when git cannot tell.
    `source` reads a file of the worktree for its symbols (None: git's hunk context only)."""
    diff = git(
        ["diff", "-U0", "--no-color", "--no-renames", "--no-ext-diff", worktree.base, "--"],
        worktree.path,
    )
    files = {touch.path: touch for touch in parse_diff(diff)}
    others = git(["ls-files", "-z", "--others", "--exclude-standard"], worktree.path)
    for path in others.split("\0"):
        if path and path not in files:
            files[path] = FileTouch(path, "?")
    if source is not None:
        for path, touch in files.items():
            if touch.hunks and path.endswith(".py"):
                spans = [(hunk.new_start, hunk.new_count) for hunk in touch.hunks]
                names = symbols_of(source(worktree.path, path), spans)
                if names is not None:
                    files[path] = FileTouch(path, touch.status, touch.hunks, names)
    return Touched(worktree.base, files)


def parse_diff(text: str) -> list[FileTouch]:
    """The files of a `git diff -U0` (no renames), with their hunks."""
    found: list[FileTouch] = []
    path, status, hunks = "", "M", []  # type: tuple[str, str, list[Hunk]]

    def flush() -> None:
        if path:
            contexts = tuple(dict.fromkeys(h.context for h in hunks if h.context))
            found.append(FileTouch(path, status, tuple(hunks), contexts))

    for line in text.splitlines():
        if line.startswith("diff --git "):
            flush()
            path, status, hunks = _new_path(line), "M", []
        elif line.startswith("new file mode"):
            status = "A"
        elif line.startswith("deleted file mode"):
            status = "D"
        elif line.startswith("Binary files ") and status == "M":
            status = "B"
        elif line.startswith("--- ") and line[4:] != "/dev/null":
            path = _unquote(line[4:]).removeprefix("a/")
        elif line.startswith("+++ ") and line[4:] != "/dev/null":
            path = _unquote(line[4:]).removeprefix("b/")
        elif line.startswith("@@ "):
            match = _HUNK.match(line)
            if match:
                old, old_n, new, new_n, context = match.groups()
                hunks.append(
                    Hunk(
                        int(old),
                        1 if old_n is None else int(old_n),
                        int(new),
                        1 if new_n is None else int(new_n),
                        _context(context),
                    )
                )
    flush()
    return found


def _new_path(header: str) -> str:
    """The path of a `diff --git a/x b/x` line (both sides are the same without renames)."""
    rest = header[len("diff --git ") :]
    if rest.startswith('"'):
        end = _quoted_end(rest)
        return _unquote(rest[:end]).removeprefix("a/")
    half = (len(rest) - 1) // 2  # "a/<p> b/<p>": the two halves have equal length
    return rest[:half].removeprefix("a/")


def _quoted_end(text: str) -> int:
    index = 1
    while index < len(text):
        if text[index] == "\\":
            index += 2
            continue
        if text[index] == '"':
            return index + 1
        index += 1
    return len(text)


def _unquote(text: str) -> str:
    """git's C-style quoting of an unusual path ("a/tab\\there")."""
    if not (text.startswith('"') and text.endswith('"') and len(text) >= 2):
        return text
    body, out, index = text[1:-1], bytearray(), 0
    while index < len(body):
        char = body[index]
        if char == "\\" and index + 1 < len(body):
            nxt = body[index + 1]
            if nxt in "01234567" and index + 3 < len(body):
                out.append(int(body[index + 1 : index + 4], 8))
                index += 4
                continue
            out.extend(_ESCAPES.get(nxt, nxt).encode())
            index += 2
            continue
        out.extend(char.encode())
        index += 1
    return out.decode("utf-8", "replace")


def _context(text: str) -> str:
    """A hunk header's function line as a name ("parse"), or "" when the line git found
    does not look like a definition (git takes any line starting with a letter)."""
    text = text.strip()
    keyword = _DEFINITION.match(text)
    if keyword:
        return keyword.group(1)
    call = _C_LIKE.match(text)
    return call.group(1) if call else ""
