"""A stdio server's stdout as JSON-RPC lines, each bounded, each answered.

A line over the limit is read to its end and dropped, never held; a line that does not
parse (malformed, or JSON nested past the decoder's cap) is reported. Either way, when
its first bytes show it was the reply to one of melgui's requests, that request gets an
error reply at once that says what was wrong (with the line's size), instead of waiting
out its timeout for an answer that already came.
"""

from __future__ import annotations

import asyncio
import re

import mcp_types as types
from mcp.shared.message import SessionMessage

HEAD_BYTES = 4096  # kept of a line over the limit: enough to find its id
_ID = re.compile(rb'"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.){0,200}")')
_REPLY = re.compile(rb'"(?:result|error)"\s*:')


async def read_line(stream: asyncio.StreamReader) -> tuple[bytes, int]:
    """The next line (without its newline) and its size; a line over the stream's limit
    comes back as its first HEAD_BYTES only, with its full size. b"", 0 at the end."""
    head = b""
    size = 0
    while True:
        try:
            line = await stream.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:
            line = exc.partial
            if not line and not size:
                return b"", 0
        except asyncio.LimitOverrunError as exc:
            piece = await stream.read(exc.consumed)
            if len(head) < HEAD_BYTES:
                head += piece[: HEAD_BYTES - len(head)]
            size += len(piece)
            continue
        if not size:
            return line.rstrip(b"\n"), len(line)
        size += len(line)
        return head, size


def oversized(head: bytes, size: int, limit: int) -> SessionMessage | Exception:
    """What the session gets for a line of `size` bytes over `limit`."""
    why = f"the server's message is {_mib(size)}, over the {_mib(limit)} limit"
    return error_reply(head, why) or ValueError(why)


def _mib(size: int) -> str:
    return f"{size / 2**20:.1f}".removesuffix(".0") + " MiB"


def error_reply(head: bytes, why: str) -> SessionMessage | None:
    """An error reply to the request whose reply `head` starts, or None when it is none."""
    found = _ID.search(head)
    if found is None or _REPLY.search(head) is None:
        return None
    raw = found.group(1)
    request_id: int | str = int(raw) if raw[:1] != b'"' else raw[1:-1].decode("utf-8", "replace")
    error = types.ErrorData(code=types.INTERNAL_ERROR, message=why)
    return SessionMessage(types.JSONRPCError(jsonrpc="2.0", id=request_id, error=error))
