"""The pure-Python search engine, run as a child process so a slow regex can be killed.

`python -m melgui.tools.search.grep_fallback grep ROOT PATTERN` prints what
`rg --null --line-number --max-columns … PATTERN .` prints, and
`python -m melgui.tools.search.grep_fallback files ROOT` what `rg --files --null .` prints,
over the files `melgui.core.config.project_files` yields. Exit codes follow ripgrep's:
0 something found, 1 nothing, 2 error (an invalid regex).
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Iterable
from typing import BinaryIO

from melgui.core.config.project_files import walk_files
from melgui.tools.search.ripgrep import MAX_COLUMNS

BINARY_SNIFF = 64 * 1024
WHOLE_FILE_BYTES = 32 * 1024 * 1024  # larger files are read line by line


def search_file(path: str, shown: bytes, regex: re.Pattern[str], out: BinaryIO) -> int:
    """Write the matching lines of one file; returns how many matched."""
    try:
        with open(path, "rb") as handle:
            head = handle.read(BINARY_SNIFF)
            if b"\x00" in head:
                return 0
            if len(head) < BINARY_SNIFF or os.fstat(handle.fileno()).st_size <= WHOLE_FILE_BYTES:
                data = head + handle.read()
                text = data.decode("utf-8", errors="surrogateescape")
                # Whole-file search first: most files have no match and need no line loop.
                if not _anchored_to_text(regex.pattern) and regex.search(text) is None:
                    return 0
                lines: Iterable[str] = text.split("\n")
                if text.endswith("\n"):
                    lines = text[:-1].split("\n")
                return _search_lines(lines, shown, regex, out)
            handle.seek(0)
            return _search_lines(
                (
                    raw.decode("utf-8", errors="surrogateescape").removesuffix("\n")
                    for raw in handle
                ),
                shown,
                regex,
                out,
            )
    except OSError:
        return 0


def _search_lines(lines: Iterable[str], shown: bytes, regex: re.Pattern[str], out: BinaryIO) -> int:
    found = 0
    for number, line in enumerate(lines, start=1):
        if "\x00" in line:
            break  # ripgrep stops at the first NUL it meets past the sniffed head
        if regex.search(line) is None:
            continue
        raw = line.encode("utf-8", errors="surrogateescape")
        if len(raw) > MAX_COLUMNS:
            raw = raw[:MAX_COLUMNS] + b" [... omitted end of long line]"
        out.write(shown + b"\x00" + str(number).encode() + b":" + raw + b"\n")
        found += 1
    return found


def _anchored_to_text(pattern: str) -> bool:
    return "\\A" in pattern or "\\Z" in pattern or "\\z" in pattern


def main(argv: list[str]) -> int:
    out = sys.stdout.buffer
    mode, root = argv[0], argv[1]
    os.chdir(root)
    if mode == "files":
        count = 0
        for relative in walk_files("."):
            out.write(b"./" + os.fsencode(relative) + b"\x00")
            count += 1
        out.flush()
        return 0 if count else 1
    try:
        # MULTILINE: the whole-file pre-check must see ^ and $ at every line, as lines do.
        regex = re.compile(argv[2], re.MULTILINE)
    except re.error as exc:
        sys.stderr.write(f"regex parse error: {exc}\n")
        return 2
    found = 0
    for relative in walk_files("."):
        found += search_file(relative, b"./" + os.fsencode(relative), regex, out)
    out.flush()
    return 0 if found else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
