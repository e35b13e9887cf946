"""A terminal whose program runs on the remote host, read here as a local pty is.

    pty = await link.open_terminal("/srv/p", None, 120, 40)    # the login shell there
    pane = TerminalPane(None, "/srv/p", pty=pty)                # the usual pane and reader

The host keeps the program (melgui/core/terminal/kept.py) and sends its output, numbered
by byte, over the link. Here it is written into a local pipe, and the pane's reader reads
that pipe as it would a pty's: the same emulator, frames and pacing. What reached the pipe
is acknowledged to the host, which sends at most its window ahead of that, so a flood is
held back on the remote (in the pty there), never piled up here.

Across a drop, the program runs on there and its output is kept; the reattach says the
offset this side has, and the host sends what follows. Output that starts past that offset
(more was missed than the host keeps) resets the screen first (ESC c), then redraws it from
the kept tail. Keys typed while the link is down are sent once it is back.

The user's own host, on this machine, passes a pipe for each terminal instead (over a
second connection, core/terminal/passed_pipes.py) and writes the output into it raw: the
pane's reader reads that pipe first, then the local one, which then carries only what this
side says (a lost host's note) and the end of file.

HostTerminals are the terminals one view has in a melgui host, whichever way it is
reached: a remote folder's host over its link (link.py), or the user's own host over its
socket (a window, the host's view: ui/window/host_view/view.py). One implementation of
the term/* side of a view: open, attach again from the offset this side has, hear output,
exits and closes, and end every program's pane in plain words when the host is gone.

    terminals = HostTerminals("the melgui host", lambda: client)
    client.on_notification = terminals.heard            # term/output, term/exit, …
    pty = await terminals.open("/p", None, 100, 30)      # read by the usual pane and reader
    kept = await terminals.kept("/p")                    # what the host kept for the folder
    await terminals.adopt(client, kept[0], 100, 30)      # its pane again, from the kept tail
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import errno
import fcntl
import logging
import os
import signal
from collections.abc import Callable
from typing import Any, Protocol

from melgui.core.terminal.passed_pipes import CHANNEL, PipeChannel
from melgui.host.client import HostClient, HostGone
from melgui.host.wire import PAYLOAD, RpcError

log = logging.getLogger(__name__)

PIPE_SIZE = 1024 * 1024
ACK_STEP = 256 * 1024  # while output waits for the pipe, acknowledge at least this much
# A read of the host's pipe takes up to the reader's batch at once: each read frees room the
# host then fills, and a read of 64 KiB woke the host four times as often.
PASSED_READ = 256 * 1024
RESET = b"\x1bc"  # the terminal's full reset (RIS)
F_SETPIPE_SZ = getattr(fcntl, "F_SETPIPE_SZ", 1031)
HUNG_UP = -signal.SIGHUP


class TerminalLink(Protocol):
    """What a remote terminal needs of its link (melgui/remote/link.py's Link)."""

    def terminal_notify(self, method: str, **params: object) -> bool:
        """Send a request that needs no answer; False when the link is down."""
        ...

    def forget_terminal(self, term_id: str) -> None: ...


class RemotePty:
    def __init__(
        self,
        link: TerminalLink,
        term_id: str,
        title: str,
        columns: int,
        rows: int,
        *,
        pipes: bool = False,
        host_pid: int = 0,
    ) -> None:
        """`host_pid`: the program's pid when its host runs on this machine (0: elsewhere,
        or not known), for reading its jobs here; never waited on."""
        self.link = link
        self.term_id = term_id
        self.title = title
        self.columns, self.rows = columns, rows
        self.offset = 0  # the next byte of output this side expects (of messages)
        # The host's pipe of this output, read before the local one while it is open
        # (a host on this machine: `take_pipe`); what precedes it there (a reset) first.
        self._passed: int | None = None
        self._passed_open = False
        self._before_passed = b""
        self._read_fd: int | None
        self._write_fd: int | None
        self._read_fd, self._write_fd = os.pipe2(os.O_NONBLOCK | os.O_CLOEXEC)
        with contextlib.suppress(OSError):
            fcntl.fcntl(self._write_fd, F_SETPIPE_SZ, PIPE_SIZE)
        self._pending = bytearray()  # received, not yet in the pipe
        self._acked = 0  # the offset last acknowledged to the host
        self._waiting_writable = False
        self._unsent = bytearray()  # keys typed while the link was down
        self._exit: int | None = None
        self._eof = False
        self.note = ""  # why the program's end was not its own (a lost link, a dead host)
        # On plain pipes there (an ACP agent's stdio): a note is not written into its
        # output (it would be no protocol line), and its stderr's tail comes at its end.
        self.pipes = pipes
        self.stderr = ""
        self.host_pid = host_pid
        # Keep running in the background: closing the pane leaves the program to the host.
        self.kept = False

    # -- what the pane's reader uses (as PtySession) -------------------------------------

    @property
    def pid(self) -> int:
        """No local process: 0 (nothing to wait for here, no pidfd)."""
        return 0

    @property
    def read_fd(self) -> int | None:
        return self._passed if self._passed_open else self._read_fd

    @property
    def eof(self) -> bool:
        return self._eof

    def read(self, limit: int = 65536) -> bytes:
        if self._passed_open:
            return self._read_passed(max(limit, PASSED_READ))
        fd = self._read_fd
        if fd is None or self._eof:
            return b""
        try:
            data = os.read(fd, limit)
        except BlockingIOError:
            return b""
        except OSError as exc:
            if exc.errno == errno.EBADF:
                self._eof = True
                return b""
            raise
        if not data:
            self._eof = True  # the program ended there and all it wrote is read
        return data

    def _read_passed(self, limit: int) -> bytes:
        """The host's pipe (on the reader's thread); at its end, b"" once: the reader
        then watches read_fd, the local pipe."""
        if self._before_passed:
            data, self._before_passed = self._before_passed, b""
            return data
        assert self._passed is not None
        try:
            data = os.read(self._passed, limit)
        except BlockingIOError:
            return b""
        except OSError:  # closed under the reader by the pane's close: its end
            data = b""
        if not data:
            self._passed_open = False  # the host closed it: all it had is read
        return data

    def take_pipe(self, fd: int, at: int, reset: bool) -> None:
        """Hear the output through the host's pipe `fd`, from offset `at` (after a reset
        of the screen when `reset` and not from the start: the kept tail follows)."""
        self._passed, self._passed_open = fd, True
        self._before_passed = RESET if reset and at > self.offset else b""
        self.offset = at

    @property
    def piped(self) -> bool:
        return self._passed is not None

    def settle(self, timeout: float = 0.0) -> None:
        return None

    def poll(self) -> int | None:
        """The exit code, once the program ended there and all it wrote is here."""
        return self._exit if self._write_fd is None else None

    @property
    def exit_code(self) -> int | None:
        return self.poll()

    def session_pids(self) -> list[int]:
        return []  # nothing of it runs on this machine

    # -- input ---------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        if self._exit is not None or self._write_fd is None:
            return
        self._unsent += data
        self.send_unsent()

    def send_unsent(self) -> None:
        if self._unsent and self.link.terminal_notify(
            "term/input", term=self.term_id, data=_b64(bytes(self._unsent))
        ):
            self._unsent.clear()

    @property
    def pending_input(self) -> int:
        return 0  # kept for the link (sent when it is back), not for the pane to flush

    def flush(self) -> None:
        return None

    def resize(self, columns: int, rows: int) -> None:
        columns, rows = max(1, columns), max(1, rows)
        if (columns, rows) == (self.columns, self.rows):
            return
        self.columns, self.rows = columns, rows
        self.link.terminal_notify("term/resize", term=self.term_id, columns=columns, rows=rows)

    # -- life ----------------------------------------------------------------------------

    def terminate(self) -> None:
        """Hang up the program there (the host ends it and everything it started); when
        `kept`, only stop hearing it (it runs on there, for the next view)."""
        if not self.kept:
            self.link.terminal_notify("term/close", term=self.term_id)
        self.link.forget_terminal(self.term_id)
        self.ended(HUNG_UP)

    def kill(self) -> None:
        self.terminate()

    def close(self, grace: float = 1.0) -> int | None:
        self.terminate()
        return self.finish()

    def finish(self) -> int | None:
        for fd in (self._read_fd, self._write_fd):
            if fd is not None:
                self._stop_waiting(fd)
                with contextlib.suppress(OSError):
                    os.close(fd)
        self._read_fd = self._write_fd = None
        if self._passed is not None:  # the host sees EPIPE: this view is let go
            self._passed_open = False
            with contextlib.suppress(OSError):
                os.close(self._passed)
            self._passed = None
        return self._exit

    @property
    def closed(self) -> bool:
        return self._read_fd is None

    # -- what the link hears -------------------------------------------------------------

    def output(self, at: int, data: bytes) -> None:
        if self._write_fd is None or self._exit is not None:
            return
        if at > self.offset:  # more was missed than the host keeps: redraw from its tail
            self._pending += RESET
            log.info("terminal %s: %d bytes missed, its screen redrawn", self.term_id,
                     at - self.offset)  # fmt: skip
        elif at < self.offset:  # heard again (a reattach from an older offset)
            data = data[self.offset - at :]
            at = self.offset
        self._pending += data
        self.offset = at + len(data)
        self._to_pipe()

    def reattached(self) -> None:
        """The host counts from the offset this side gave at the reattach."""
        self._acked = self.offset - len(self._pending)
        self.send_unsent()

    def ended(self, code: int, note: str = "") -> None:
        """The program ended there (`note`: said on the screen when it was not its own end)."""
        if self._exit is not None:
            return
        self._exit = code
        if note:
            self.note = note
        if note and not self.pipes:
            self._pending += f"\r\n\x1b[31m[{note}]\x1b[0m\r\n".encode()
        self._to_pipe()

    def _to_pipe(self) -> None:
        """Write what was heard into the pipe; once all of it is there, acknowledge it
        (the host then sends more), and after the program's end, close the pipe."""
        fd = self._write_fd
        if fd is None:
            return
        while self._pending:
            try:
                written = os.write(fd, self._pending)
            except BlockingIOError:
                self._wait_writable(fd)
                self._acknowledge(ACK_STEP)  # what is in the pipe, while the rest waits
                return
            except OSError:  # the pane closed its end
                self._pending.clear()
                break
            del self._pending[:written]
        self._stop_waiting(fd)
        self._acknowledge(ACK_STEP)  # an ack per message would halve a flood's pace
        if self._exit is not None:  # all of it is in the pipe: the reader sees the end
            os.close(fd)
            self._write_fd = None

    def _acknowledge(self, step: int = 1) -> None:
        """Tell the host how much of its output is in the pipe (a reset's own bytes still
        waiting make it count a little low, which only holds it back a little)."""
        through = self.offset - len(self._pending)
        if through - self._acked >= step and self.link.terminal_notify(
            "term/ack", term=self.term_id, through=through
        ):
            self._acked = through

    def _wait_writable(self, fd: int) -> None:
        if not self._waiting_writable:
            self._waiting_writable = True
            asyncio.get_running_loop().add_writer(fd, self._to_pipe)

    def _stop_waiting(self, fd: int) -> None:
        if self._waiting_writable:
            self._waiting_writable = False
            with contextlib.suppress(RuntimeError, ValueError, OSError):
                asyncio.get_running_loop().remove_writer(fd)


CLOSED_THERE = "the terminal was closed on the remote"


class TerminalUnavailable(Exception):
    """A terminal could not be opened or listed; the message says why."""


class HostTerminals:
    def __init__(
        self,
        label: str,
        current: Callable[[], HostClient | None],
        state: Callable[[], str] = lambda: "closed",
        *,
        here: bool = False,
        source: str = "",
    ) -> None:
        """`label`: the host in words; `current`: its client while connected; `here`: the
        host runs on this machine (a program's pid there is one here: its jobs can be read
        for the quit question)."""
        self.label = label
        self._current = current
        self._state = state
        self.here = here
        self.source = source  # term/open's: whose terminals term/list gives back (kept())
        self.open_ptys: dict[str, RemotePty] = {}
        self.closed_note = CLOSED_THERE
        # The channel the host on this machine passes terminals' pipes over, and the
        # client it was opened for (or the client that could give none: messages then).
        self._channel: PipeChannel | None = None
        self._channel_of: HostClient | None = None

    def _client(self) -> HostClient:
        client = self._current()
        if client is None:
            raise TerminalUnavailable(f"not connected to {self.label} now: {self._state()}")
        return client

    async def open(
        self,
        folder: str,
        command: str | None,
        columns: int,
        rows: int,
        env: dict[str, str] | None = None,
        *,
        argv: list[str] | None = None,
        pipes: bool = False,
    ) -> RemotePty:
        """A program in a pty in the host (the login shell there when `command` is None;
        `argv`: exactly that program, no shell; `pipes`: on plain pipes), read here
        through a RemotePty. Raises TerminalUnavailable saying why it could not start."""
        client = self._client()
        try:
            opened = await client.call(
                "term/open", folder=folder, command=command, columns=columns, rows=rows,
                env=env or {}, **({"argv": argv} if argv else {}),
                **({"pipes": True} if pipes else {}),
                **({"source": self.source} if self.source else {}),
            )  # fmt: skip
        except RpcError as exc:
            raise TerminalUnavailable(f"{self.label}: {exc.message}") from None
        except (HostGone, ConnectionError):
            raise TerminalUnavailable(f"the connection to {self.label} dropped") from None
        return await self.adopt(client, opened, columns, rows, pipes=pipes)

    async def kept(self, folder: str) -> list[dict[str, Any]]:
        """The terminals the host keeps for `folder` that these opened (`source`: a window's,
        not a remote view's) and no other view shows (`term/list`), oldest first: a new
        window's panes again."""
        client = self._client()
        try:
            listed = await client.call("term/list", folder=os.path.realpath(folder))
        except RpcError as exc:
            raise TerminalUnavailable(f"{self.label}: {exc.message}") from None
        except (HostGone, ConnectionError):
            raise TerminalUnavailable(f"the connection to {self.label} dropped") from None
        terminals: list[dict[str, Any]] = listed["terminals"]
        mine = [t for t in terminals if t.get("source") == self.source and not t.get("pipes")]
        return [t for t in mine if not t.get("views")]

    async def adopt(
        self,
        client: HostClient,
        described: dict[str, Any],
        columns: int,
        rows: int,
        *,
        pipes: bool = False,
    ) -> RemotePty:
        """A terminal the host has (`term/open`'s or `term/list`'s entry), heard here from
        its start or the kept tail (a reset first when that is not its start)."""
        pid = int(described.get("pid") or 0) if self.here else 0
        pty = RemotePty(self, str(described["term"]), str(described["title"]), columns, rows,
                        pipes=pipes, host_pid=pid)  # fmt: skip
        self.open_ptys[pty.term_id] = pty
        await self.attach(client, pty)
        return pty

    async def attach(self, client: HostClient, pty: RemotePty) -> None:
        """Hear the terminal from the offset this side has (again, after a drop), through
        a pipe the host passes when it runs on this machine, else in messages."""
        channel = None
        if self.here and not pty.pipes and not pty.piped:
            channel = await self._pipe_channel(client)
        try:
            answer = await client.call(
                "term/attach", term=pty.term_id, since=pty.offset, columns=pty.columns,
                rows=pty.rows, **({"pipe": True} if channel is not None else {}),
            )  # fmt: skip
            if answer.get("pipe"):
                fd = channel.take(pty.term_id) if channel is not None else None
                if fd is not None:
                    pty.take_pipe(fd, int(answer["at"]), bool(answer.get("reset")))
                else:  # it never came (never from a host of this version): messages
                    await client.call(
                        "term/attach", term=pty.term_id, since=pty.offset,
                        columns=pty.columns, rows=pty.rows,
                    )  # fmt: skip
        except RpcError:  # the host has no such terminal any more
            self.open_ptys.pop(pty.term_id, None)
            pty.ended(HUNG_UP, self.closed_note)
            return
        except (HostGone, ConnectionError):
            return  # the next reconnect attaches it
        pty.reattached()

    async def _pipe_channel(self, client: HostClient) -> PipeChannel | None:
        """The channel to the host on this machine for `client` (opened at its first
        terminal), or None when it cannot have one."""
        if self._channel_of is client:
            return self._channel
        self.close_channel()
        self._channel_of = client
        if client.socket_path is None:
            return None
        try:
            token = str((await client.call(CHANNEL))["token"])
            channel = await PipeChannel.open(client.socket_path, token)
        except (RpcError, HostGone, OSError, TimeoutError, ValueError, KeyError) as exc:
            log.info("terminal output in messages: no pipe channel to the host (%s)", exc)
            return None
        if client.gone or self._channel_of is not client:  # it ended, or another came
            channel.close()
            return None
        self._channel = channel
        client.closers.append(channel.close)
        return channel

    def close_channel(self) -> None:
        if self._channel is not None:
            self._channel.close()
        self._channel = self._channel_of = None

    async def attach_all(self, client: HostClient) -> None:
        for pty in list(self.open_ptys.values()):
            await self.attach(client, pty)

    def heard(self, method: str, params: dict[str, Any]) -> None:
        """A notification from the host: term/* ones for these terminals are taken."""
        if not method.startswith("term/"):
            return
        pty = self.open_ptys.get(str(params.get("term")))
        if pty is None:
            return
        if method == "term/output":
            pty.output(int(params["at"]), bytes(params[PAYLOAD]))
        elif method == "term/exit":
            self.open_ptys.pop(pty.term_id, None)
            pty.stderr = str(params.get("stderr") or "")
            pty.ended(int(params["code"]))
        elif method == "term/closed":
            self.open_ptys.pop(pty.term_id, None)
            pty.ended(HUNG_UP, self.closed_note)

    # -- what a RemotePty asks of its link ------------------------------------------------

    def terminal_notify(self, method: str, **params: object) -> bool:
        client = self._current()
        if client is None or client.gone:
            return False
        client.notify(method, **params)
        return True

    def forget_terminal(self, term_id: str) -> None:
        self.open_ptys.pop(term_id, None)

    def end_all(self, note: str) -> None:
        """The host is gone (or the link lost for good): each pane says why its program
        ended."""
        terminals, self.open_ptys = self.open_ptys, {}
        for pty in terminals.values():
            pty.ended(HUNG_UP, note)
        self.close_channel()

    def keep_running(self) -> None:
        """The window goes and these programs stay in the host for the next one: closing
        their panes detaches them instead of ending them."""
        for pty in self.open_ptys.values():
            pty.kept = True


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
