"""The host protocol's framing: one JSON-RPC 2.0 message per line, UTF-8, no `jsonrpc`
member needed (it is sent, and not required back).

    line = encode(request(1, "initialize", {"version": __version__, "protocol": PROTOCOL}))
    message = decode(line)          # raises RpcError(PARSE, ...) on a bad line
"""

from __future__ import annotations

import contextlib
import fcntl
import gc
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from melgui import __version__
from melgui.core.config.redaction import hide_secrets

if TYPE_CHECKING:
    from melgui.core.protocol.content import Part

# The wire's own version (docs/host-protocol.md says what each added); a view and a host
# of different melgui versions refuse each other at `initialize` whatever this says,
# since the change records follow the code. 2: checkpoint/calls, checkpoint/diff, and
# checkpoint/restore's records, for a remote folder's call cards.
# 3: fs/read, fs/write and term/open's argv and pipes, for a remote folder's ACP agents.
# 4: hooks/run, for a remote folder's own hooks, run there.
# 6: worktree/create, …/changes, …/losses, …/retire, for a host's workers' own worktrees.
# 7: worktree/merge, …/discard, …/left, …/remove (docs/host-protocol.md, "Worktrees there,
# merged and found again"), for a host worker's Changes view and a window's next start.
# 8: session/open's source, settings/update's role and plan, session/branch, turn/compact,
#    the branched record and session/list's views, for a window's main conversation there.
# 9: worktree/apply, …/discard_part, …/landed: a host worker's files and hunks, applied or
#    discarded there from the window's Changes view.
# 10: session/rewind, context/measure, context/pin, context/unpin, session/preface (the
#    main conversation's Rewind, context meter, pins and a file's Reject on its card).
# 11: term/open's source, term/list's folder, and each terminal's source, views, pid and
#    pipes; host/status's terminals; term/open's folder as a real path: the local host's
#    terminal panes (a window, the host's view) come back in the next window.
# 12: history/list (a remote folder's window lists its conversations kept in the
#    history of melgui's host there, where its main conversation runs).
# 13: compaction/answer, the compaction and compaction_resolved records, session/list's
#    compaction and preview, settings/update's approval and compaction_preview: a main
#    conversation's preview before a compaction waits in the host, and the window's
#    approval settings go to each session it runs there.
# 14: mcp/watch, …/unwatch, …/act, …/tool, …/log, …/prompt, …/resource, …/import,
#    …/answer and the mcp/state and mcp/progress notifications: the folder's MCP servers
#    run in the host its conversations run in, and a window shows and drives them there.
# 15: session/open's agent and resume, the agent record and a snapshot's agent,
#    agent/sign_in, agent/mode, agent/model, approval records' options and preview and
#    approval/answer's option: a host view's ACP agent panes run in the host.
# 16: term/channel and term/attach's pipe: a --with-host window's terminal output through
#    a pipe the host passes over a second connection (SCM_RIGHTS), not in messages.
# 17: the worktree_files record and a snapshot's worktree_files: a worker's own worktree
#    read in the host, for the views' agents boards (they run no git for it).
# 18: the plan and terminal* records, a snapshot's agent.plan and agent.terminals, and
#    agent/terminal_input: an ACP agent's plan and terminal tabs in a view's window.
# 19: session/open's settings.sandbox_commands and settings.env: a loop-there session's
#    commands in its configured host's sandbox, with its env (an older host ignored them
#    and ran them unsandboxed).
# 20: changes/diff: a remote folder's `/review last N` and `/review BRANCH` read the diff
#    in the folder there (they ran git in this machine's stand-in folder).
PROTOCOL = 21
VERSION = __version__
# The longest line either side reads: a snapshot of a long conversation is one line.
MAX_LINE = 64 * 1024 * 1024
BIG_LINE = 256 * 1024  # decoded with the garbage collector paused

# A pipe's buffer for the protocol (Linux's default is 64 KiB): a terminal flood crosses
# each pipe on its way (bridge, ssh) in 1 MiB steps, not 64 KiB ones, each a wake-up of
# both processes, which on a busy machine cost more than the bytes.
PIPE_SIZE = 1024 * 1024
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)

# A notification whose params hold `payload: N` is followed on the wire by exactly N raw
# bytes (terminal output), which the reader puts in params["payload"]: no base64, no JSON
# string of megabytes to encode and parse on either side.
PAYLOAD = "payload"

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
VERSION_MISMATCH = -32010
NOT_INITIALIZED = -32011
UNKNOWN_SESSION = -32012
REFUSED = -32013

Message = dict[str, Any]


class RpcError(Exception):
    """A JSON-RPC error: raised by a handler, sent as `error`, raised again by the caller."""

    def __init__(self, code: int, message: str, data: Any = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.data = data

    def to_json(self) -> dict[str, Any]:
        body: dict[str, Any] = {"code": self.code, "message": self.message}
        if self.data is not None:
            body["data"] = self.data
        return body


def version_refusal(
    view: str,
    host: str,
    view_protocol: object = PROTOCOL,
    gives_way: bool = False,
    host_protocol: object = PROTOCOL,
) -> str:
    """What both sides say when their versions (or, same version, protocols) differ;
    `gives_way`: the host runs nothing and ends so that the view's own can start."""
    if view == host and view_protocol != host_protocol:  # a build between two releases
        view, host = f"{view} (protocol {view_protocol})", f"{host} (protocol {host_protocol})"
    versions = f"the running melgui host is version {host} and this melgui is version {view}"
    if gives_way:
        return f"{versions}; it runs nothing, so it ends and this melgui starts its own"
    return (
        f"{versions}; they cannot work together. Quit the other melgui (or run "
        f"`melgui host --stop`) and start this one again"
    )


def encode(message: Message) -> bytes:
    return (json.dumps(message, ensure_ascii=False, separators=(",", ":")) + "\n").encode()


def decode(line: bytes) -> Message:
    try:
        with collector_paused(len(line) > BIG_LINE):
            message = json.loads(line)
    except (UnicodeDecodeError, ValueError) as exc:
        raise RpcError(PARSE_ERROR, f"not a JSON line: {exc}") from None
    if not isinstance(message, dict):
        raise RpcError(INVALID_REQUEST, "a message must be a JSON object")
    return message


@contextlib.contextmanager
def collector_paused(paused: bool = True) -> Iterator[None]:
    """For decoding a large message: it makes no reference cycles, and the collections
    of a large heap (a window's) its allocations set off cost more than the decode."""
    if not paused or not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.enable()


def request(ident: int, method: str, params: dict[str, Any] | None = None) -> Message:
    return {"jsonrpc": "2.0", "id": ident, "method": method, "params": params or {}}


def notification(method: str, params: dict[str, Any]) -> Message:
    return {"jsonrpc": "2.0", "method": method, "params": params}


def result(ident: Any, value: Any) -> Message:
    return {"jsonrpc": "2.0", "id": ident, "result": value}


def failure(ident: Any, error: RpcError) -> Message:
    return {"jsonrpc": "2.0", "id": ident, "error": error.to_json()}


def encode_with_payload(method: str, params: dict[str, Any], payload: bytes) -> bytes:
    """A notification followed by its raw bytes (see PAYLOAD)."""
    return encode(notification(method, {**params, PAYLOAD: len(payload)})) + payload


def widen_pipe(fd: int, size: int = PIPE_SIZE) -> None:
    """Give the pipe `fd` is an end of a `size` buffer; nothing when it is no pipe, or
    the system allows less (an unprivileged user gets /proc/sys/fs/pipe-max-size)."""
    with contextlib.suppress(OSError):
        fcntl.fcntl(fd, _F_SETPIPE_SZ, size)


# -- params that carry a key or a prompt's parts, and keys hidden in what goes back -----


def api_key_of(params: dict[str, Any], *, required: bool = False) -> str | None:
    """`api_key`: the model key a view sends for a loop that runs in the host ("" when
    the view has none); None when not given (the host's own key)."""
    api_key = params.get("api_key")
    if api_key is None and not required:
        return None
    if not isinstance(api_key, str) or (required and not api_key):
        raise RpcError(INVALID_PARAMS, "api_key must be a string (the model's key)")
    return api_key


def parts_of(params: dict[str, Any]) -> tuple[Part, ...]:
    """`parts`: a prompt's attachments (images, files), as a message stores them."""
    from melgui.core.protocol.content import part_from_json  # the bridge goes without

    try:
        return tuple(part_from_json(part) for part in params.get("parts") or [])
    except (ValueError, TypeError) as exc:  # binascii.Error is a ValueError
        raise RpcError(INVALID_PARAMS, f"turn/prompt: a part cannot be read ({exc})") from None


def hidden(line: bytes, keys: tuple[str, ...]) -> bytes:
    """An encoded line with the keys views sent hidden (a tool read one, a model said it)."""
    return hide_secrets(line.decode(), keys).encode() if keys else line
