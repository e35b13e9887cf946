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
from typing import Protocol

log = logging.getLogger(__name__)

PIPE_SIZE = 1024 * 1024
ACK_STEP = 256 * 1024  # while output waits for the pipe, acknowledge at least this much
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
        self.offset = 0  # the next byte of output this side expects
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
        return self._read_fd

    @property
    def eof(self) -> bool:
        return self._eof

    def read(self, limit: int = 65536) -> bytes:
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
        self._acknowledge()
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


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")
