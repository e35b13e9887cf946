"""Tool names the model sees: `mcp__<server>__<tool>`, always `^[a-zA-Z0-9_-]{1,64}$`.

Characters outside the set become `_`. A name that is too long, or that another tool
already took, is cut and ends in `_` + 6 hex digits of the SHA-256 of the server and tool
names, so the same server and tool always get the same name.
"""

from __future__ import annotations

import re
from collections.abc import Container

MAX_NAME = 64
PREFIX = "mcp"
_UNSAFE = re.compile(r"[^a-zA-Z0-9_-]")
VALID = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def sanitize(part: str) -> str:
    return _UNSAFE.sub("_", part) or "_"


def _digest(server: str, tool: str, salt: int) -> str:
    seed = f"{server}\0{tool}\0{salt}" if salt else f"{server}\0{tool}"
    import hashlib  # OpenSSL's library: loaded when first used

    return hashlib.sha256(seed.encode("utf-8")).hexdigest()[:6]


def tool_name(server: str, tool: str, taken: Container[str] = ()) -> str:
    """The model-facing name of `tool` of `server`, not in `taken`."""
    plain = f"{PREFIX}__{sanitize(server)}__{sanitize(tool)}"
    if len(plain) <= MAX_NAME and plain not in taken:
        return plain
    salt = 0
    while True:
        suffix = "_" + _digest(server, tool, salt)
        name = plain[: MAX_NAME - len(suffix)] + suffix
        if name not in taken:
            return name
        salt += 1
