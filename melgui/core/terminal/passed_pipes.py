"""A terminal's output handed from the melgui host to a view on the same machine through a
pipe, whose read end goes over a Unix socket (SCM_RIGHTS), Qt-free.

The host runs a --with-host window's terminal programs. As messages on the window's
socket, a flood's bytes were read, parsed and written again by the window's own Python
thread, which then held the GIL the pane's emulator (on its reader thread) waited for.
Through a pipe they reach the reader thread as a local pty's output does: the window's
thread never touches them, and the pipe's buffer is the flow control.

asyncio's streams read a view's socket and drop any descriptor passed on it, so the pipes
come over a second connection of the view's, its channel: the view asks for a token
(`term/channel`), connects again and says it (`term/channel` with the token); the host
then passes each pipe's read end there, with a line naming its terminal, before it
answers the `term/attach` that asked for it, so the view finds it there at the answer.

    token = (await client.call("term/channel"))["token"]      # the view
    channel = await PipeChannel.open(socket_path, token)
    write_fd = hand_pipe(channel_socket, "t1-42")              # the host, at term/attach
    read_fd = channel.take("t1-42")                            # the view, at its answer
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import socket
from typing import Protocol

from melgui.core.runtime.deadline import within

PIPE_SIZE = 1024 * 1024  # the default most an unprivileged user may give a pipe
JOIN_TIMEOUT_S = 5.0
_F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
CHANNEL = "term/channel"


def hand_pipe(channel: socket.socket, term_id: str) -> int | None:
    """A new pipe whose read end is passed over `channel` with a line naming `term_id`:
    its write end (non-blocking), or None when the channel cannot take it."""
    read_fd, write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
    with contextlib.suppress(OSError):
        fcntl.fcntl(write_fd, _F_SETPIPE_SZ, PIPE_SIZE)
    line = (json.dumps({"term": term_id}) + "\n").encode()
    try:
        sent = socket.send_fds(channel, [line], [read_fd])
    except OSError:  # the view closed its channel, or does not read it
        sent = 0
    finally:
        os.close(read_fd)  # the view has its own now
    if sent != len(line):
        os.close(write_fd)
        return None
    return write_fd


class Connection(Protocol):
    def fileno(self) -> int: ...


def own_socket(connection: Connection) -> socket.socket:
    """A non-blocking socket of its own on `connection` (a duplicate of its descriptor:
    asyncio's transport keeps the original), for passing descriptors on."""
    channel = socket.socket(fileno=os.dup(connection.fileno()))
    channel.setblocking(False)
    return channel


class PipeChannel:
    """A view's end of its channel: the pipes' read ends the host passed, by terminal."""

    def __init__(self, sock: socket.socket) -> None:
        self._sock = sock
        self._taken: dict[str, int] = {}  # passed, not yet asked for

    @classmethod
    async def open(cls, path: str, token: str) -> PipeChannel:
        """Connect to the host's socket at `path` and join the view's channel (`token`,
        from its `term/channel`); raises OSError or TimeoutError when it cannot."""
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM | socket.SOCK_CLOEXEC)
        sock.setblocking(False)
        loop = asyncio.get_running_loop()
        try:
            await within(loop.sock_connect(sock, path), JOIN_TIMEOUT_S)
            join = {"jsonrpc": "2.0", "id": 1, "method": CHANNEL, "params": {"token": token}}
            await loop.sock_sendall(sock, (json.dumps(join) + "\n").encode())
            answer = b""
            while not answer.endswith(b"\n"):
                got = await within(loop.sock_recv(sock, 4096), JOIN_TIMEOUT_S)
                if not got:
                    raise ConnectionError("the host closed the channel")
                answer += got
            if "result" not in json.loads(answer):
                raise ConnectionError(f"the host refused the channel: {answer[:200]!r}")
        except BaseException:
            sock.close()
            raise
        return cls(sock)

    def take(self, term_id: str) -> int | None:
        """The read end the host passed for `term_id` (already here when its term/attach
        has been answered), non-blocking; None when none came."""
        while term_id not in self._taken:
            try:
                data, fds, _flags, _address = socket.recv_fds(
                    self._sock, 4096, 4, socket.MSG_CMSG_CLOEXEC
                )
            except OSError:  # nothing waiting (BlockingIOError), or the channel is gone
                return None
            if not data and not fds:
                return None  # the host closed it
            names = [json.loads(line)["term"] for line in data.splitlines() if line.strip()]
            if len(names) != len(fds):  # never from a host of this version: use none
                for fd in fds:
                    os.close(fd)
                continue
            for name, fd in zip(names, fds, strict=True):
                stale = self._taken.pop(name, None)
                if stale is not None:
                    os.close(stale)
                self._taken[name] = fd
        fd = self._taken.pop(term_id)
        os.set_blocking(fd, False)
        return fd

    def close(self) -> None:
        for fd in self._taken.values():
            with contextlib.suppress(OSError):
                os.close(fd)
        self._taken.clear()
        self._sock.close()
