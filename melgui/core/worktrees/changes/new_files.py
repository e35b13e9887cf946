"""The patch of an untracked file, written as `git diff --no-index /dev/null FILE` would
write it, without starting git: a worker's new files are often many and small.

Binary files, symlinks and very large files are left to git (`None`).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

MAX_BYTES = 8 * 1024 * 1024
_SNIFF = 8000  # git's own look for a NUL byte
_ESCAPES = {'"': '\\"', "\\": "\\\\", "\a": "\\a", "\b": "\\b", "\t": "\\t", "\n": "\\n"}
_ESCAPES.update({"\v": "\\v", "\f": "\\f", "\r": "\\r"})


def new_file_patch(root: Path, path: str) -> str | None:
    """The "new file" patch of `root/path`, or None when git must write it."""
    full = root / path
    try:
        info = os.lstat(full)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_BYTES:
            return None
        data = full.read_bytes()
    except OSError:
        return None
    if b"\0" in data[:_SNIFF]:
        return None
    mode = "100755" if info.st_mode & stat.S_IXUSR else "100644"
    old, new = quote_path("a/" + path), quote_path("b/" + path)
    lines = [f"diff --git {old} {new}", f"new file mode {mode}"]
    if data:
        text = data.decode("utf-8", "surrogateescape")
        body = text.split("\n")
        if text.endswith("\n"):
            body.pop()
        count = "" if len(body) == 1 else f",{len(body)}"
        tab = "\t" if " " in new else ""  # git ends a name holding a space with a tab
        lines += ["--- /dev/null", f"+++ {new}{tab}", f"@@ -0,0 +1{count} @@"]
        lines += ["+" + line for line in body]
        if not text.endswith("\n"):
            lines.append("\\ No newline at end of file")
    return "\n".join(lines) + "\n"


def quote_path(name: str) -> str:
    """git's quoting of a path in a patch (core.quotePath off: non-ASCII stays as is)."""
    if not any(char in _ESCAPES or ord(char) < 0x20 or ord(char) == 0x7F for char in name):
        return name
    out = []
    for char in name:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif ord(char) < 0x20 or ord(char) == 0x7F:
            out.append(f"\\{ord(char):03o}")
        elif 0xDC80 <= ord(char) <= 0xDCFF:  # a byte that is not UTF-8 (surrogateescape)
            out.append(f"\\{ord(char) - 0xDC00:03o}")
        else:
            out.append(char)
    return '"' + "".join(out) + '"'
