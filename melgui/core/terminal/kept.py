"""Terminals a host keeps for views elsewhere (a remote folder's terminal panes), Qt-free.

    terminals = KeptTerminals()
    term = terminals.open("/srv/p", None, 120, 40, env={})     # the login shell there
    terminals.attach(term.id, view, since=None)                # {"at": …, "reset": True}
    terminals.input(term.id, b"ls\\r")
    terminals.ack(term.id, view, through=4096)
    terminals.detach(view)                                     # the link dropped: it runs on

Output is numbered by byte: a view says the offset it has, and gets what follows. The last
RING bytes are kept, so a view that comes back after a drop gets exactly what it missed;
one that missed more (or a new view) is told to reset its screen and gets the kept tail,
which redraws the screen of nearly every program (a full-screen one redraws on the
resize the view sends with its size).

Flow: a view is sent at most WINDOW bytes ahead of what it acknowledged. While an attached
view's window is full, the pty is not read: the kernel's buffer holds the program back,
as in a local pane. With no view attached, the program runs on and its output is kept.

A view on this machine may take the output through a pipe instead (`attach(…, pipe=fd)`,
the write end; the view has the read end, passed over its socket): the ring's bytes are
written into it raw, no message, no acknowledgement. What the pipe cannot take yet waits
in the ring (up to WINDOW behind its end, then the pty is not read), and once the program
has ended and the pipe has taken all of its output, the pipe is closed (the view reads
its end of file) before term/exit is sent.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import itertools
import logging
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from melgui.core.terminal.piped import PipedProgram
from melgui.core.terminal.pty_session import PtyError, PtySession, command_argv, login_shell

log = logging.getLogger(__name__)

RING = 8 * 1024 * 1024  # output kept for a view that comes back
WINDOW = 4 * 1024 * 1024  # output sent to a view and not yet acknowledged
CHUNK = 256 * 1024  # bytes per output message
EXIT_POLL_S = 0.05
# Output read within this long of the last message waits for the next: a pty gives ~4 KiB
# a read, and a message each (a wake-up and the view's work) would cap a flood's pace.
SEND_GAP_S = 0.002


class View(Protocol):
    """Whatever a terminal's output is sent to (a host's view connection)."""

    def notify(self, method: str, params: dict[str, Any], payload: bytes | None = None) -> None:
        """`payload`: raw bytes sent after the message (the output itself)."""
        ...

    def hand_pipe(self, term_id: str) -> int | None:
        """A new pipe whose read end was passed to the view (its socket's SCM_RIGHTS):
        its write end, or None when the view cannot take one (then it gets messages)."""
        ...


@dataclass(eq=False)
class _Viewer:
    view: View
    sent: int  # offset of the next byte to send (through a pipe: written into it)
    acked: int
    told_exit: bool = False
    pipe: int | None = None  # the write end of the view's pipe, while open
    piped: bool = False  # the view hears this terminal through a pipe, not messages
    waiting: bool = False  # for the pipe to take more (a writer on the loop)


@dataclass(eq=False)
class KeptTerminal:
    id: str
    folder: str
    title: str
    pty: PtySession | PipedProgram  # a program on plain pipes: an ACP agent's protocol
    start: int = 0  # offset of the ring's first byte
    ring: bytearray = field(default_factory=bytearray)
    exit_code: int | None = None
    viewers: list[_Viewer] = field(default_factory=list)
    reading_fd: int | None = None
    source: str = ""  # who opened it ("window": a window's pane), for term/list
    sent_at: float = 0.0  # loop time of the last output sent
    send_later: asyncio.TimerHandle | None = None

    @property
    def end(self) -> int:
        return self.start + len(self.ring)

    def describe(self) -> dict[str, Any]:
        described = {
            "term": self.id,
            "folder": self.folder,
            "title": self.title,
            "end": self.end,
            "exit_code": self.exit_code,
            "pid": self.pty.pid,  # on the host's machine: a view there reads its jobs
            "source": self.source,
        }
        if isinstance(self.pty, PipedProgram):
            described["stderr"] = self.pty.stderr_text()
            described["pipes"] = True
        return described


class TerminalError(Exception):
    """A request about a terminal that cannot be met; the message says why."""


class KeptTerminals:
    def __init__(self, ring: int = RING, window: int = WINDOW) -> None:
        self.ring_size = ring
        self.window = window
        self._terminals: dict[str, KeptTerminal] = {}
        self._numbers = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()
        self.on_change: Callable[[], None] | None = None

    # -- what a view asks ----------------------------------------------------------------

    def open(
        self,
        folder: str,
        command: str | None,
        columns: int,
        rows: int,
        env: dict[str, str] | None = None,
        *,
        argv: list[str] | None = None,
        pipes: bool = False,
        source: str = "",
    ) -> KeptTerminal:
        """`argv`: run exactly that, no shell; `pipes`: on plain pipes, no pty (its stdout's
        bytes as they are, its stderr kept apart: PipedProgram)."""
        run = argv or command_argv(command)
        environment = {**os.environ, **(env or {})}
        pty: PtySession | PipedProgram
        try:
            if pipes:
                pty = PipedProgram(run, cwd=folder, env=environment)
            else:
                pty = PtySession(run, cwd=folder, env=environment, columns=columns, rows=rows)
        except PtyError as exc:
            raise TerminalError(str(exc)) from None
        if argv:
            title = " ".join(argv)
        else:
            title = command.strip() if command else os.path.basename(login_shell())
        term = KeptTerminal(f"t{next(self._numbers)}-{pty.pid}", folder, title, pty, source=source)
        self._terminals[term.id] = term
        self._read(term)
        return term

    def list(self, folder: str | None = None, asker: View | None = None) -> list[dict[str, Any]]:
        """Every terminal (of `folder` when given), oldest first, with how many views
        other than `asker` hear it (`views`: a pane another window shows stays its own)."""
        return [
            {**term.describe(), "views": sum(v.view is not asker for v in term.viewers)}
            for term in self._terminals.values()
            if folder is None or term.folder == folder
        ]

    def attach(
        self,
        term_id: str,
        view: View,
        since: int | None,
        size: tuple[int, int] | None = None,
        *,
        pipe: int | None = None,
    ) -> dict[str, Any]:
        """The view hears the terminal from `since` (its offset), or from the kept tail
        after a reset (`reset`: true) when it has nothing or missed more than is kept.
        `pipe`: the write end of a non-blocking pipe whose read end the view has: the
        output goes into it raw (this takes it, and closes it when done)."""
        try:
            term = self._get(term_id)
        except TerminalError:
            if pipe is not None:
                os.close(pipe)
            raise
        self._forget_view(term, view)
        reset = since is None or since < term.start or since > term.end
        at = term.start if reset else int(since or 0)
        term.viewers.append(_Viewer(view, at, at, pipe=pipe, piped=pipe is not None))
        if size is not None and term.exit_code is None:
            term.pty.resize(*size)
        asyncio.get_running_loop().call_soon(self._pump, term)  # after this answer
        return {**term.describe(), "at": at, "reset": reset}

    def get(self, term_id: str) -> KeptTerminal:
        """The terminal `term_id`; raises TerminalError when there is none."""
        return self._get(term_id)

    def input(self, term_id: str, data: bytes) -> None:
        term = self._get(term_id)
        if term.exit_code is None:
            term.pty.write(data)
            if term.pty.pending_input:
                self._spawn(self._flush_later(term))

    def resize(self, term_id: str, columns: int, rows: int) -> None:
        term = self._get(term_id)
        if term.exit_code is None:
            term.pty.resize(columns, rows)

    def ack(self, term_id: str, view: View, through: int) -> None:
        term = self._terminals.get(term_id)
        if term is None:
            return
        for viewer in term.viewers:
            if viewer.view is view:
                viewer.acked = max(viewer.acked, min(through, viewer.sent))
        self._pump(term)

    def close(self, term_id: str) -> None:
        """End the program and everything it started (in the background: a hangup, then
        SIGKILL after a grace); forget the terminal."""
        term = self._terminals.pop(term_id, None)
        if term is None:
            return
        self._stop_reading(term)
        if term.send_later is not None:
            term.send_later.cancel()
        self._spawn(asyncio.to_thread(term.pty.close, 0.5))
        for viewer in term.viewers:
            self._close_pipe(viewer)  # what it holds is read before the note of the close
            viewer.view.notify("term/closed", {"term": term.id})
        self._changed()

    def detach(self, view: View) -> None:
        """The view is gone (its connection closed): its terminals run on."""
        for term in self._terminals.values():
            self._forget_view(term, view)
            self._pump(term)

    def running(self) -> bool:
        return any(term.exit_code is None for term in self._terminals.values())

    async def aclose(self) -> None:
        for term_id in list(self._terminals):
            self.close(term_id)
        closing = [t for t in self._tasks if not t.done()]
        await asyncio.gather(*closing, return_exceptions=True)

    # -- the terminal's output -----------------------------------------------------------

    def _get(self, term_id: str) -> KeptTerminal:
        term = self._terminals.get(term_id)
        if term is None:
            raise TerminalError(f"no terminal {term_id!r} on this host (it was closed)")
        return term

    def _forget_view(self, term: KeptTerminal, view: View) -> None:
        for viewer in term.viewers:
            if viewer.view is view:
                self._close_pipe(viewer)
        term.viewers = [viewer for viewer in term.viewers if viewer.view is not view]

    def _blocked(self, term: KeptTerminal) -> bool:
        """An attached view's window is full (sent and not acknowledged, or, through a
        pipe, kept and not yet taken by it): read nothing more for now."""
        return any(
            (term.end - v.sent if v.piped else v.sent - v.acked) >= self.window
            for v in term.viewers
        )

    def _read(self, term: KeptTerminal) -> None:
        fd = term.pty.read_fd
        if term.exit_code is not None or fd is None or term.reading_fd == fd:
            return
        self._stop_reading(term)
        term.reading_fd = fd
        asyncio.get_running_loop().add_reader(fd, self._readable, term)

    def _stop_reading(self, term: KeptTerminal) -> None:
        if term.reading_fd is not None:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(term.reading_fd)
            term.reading_fd = None

    def _readable(self, term: KeptTerminal) -> None:
        got = 0
        while got < CHUNK * 4 and not self._blocked(term):
            try:
                data = term.pty.read()
            except OSError as exc:
                log.warning("terminal %s: reading failed: %s", term.id, exc)
                data = b""
                term.pty.finish()
            if not data:
                break
            got += len(data)
            self._keep(term, data)
        if any(viewer.piped for viewer in term.viewers):
            self._pump(term)  # a pipe takes it now: no message to save
        else:
            self._pump_soon(term)
        if term.pty.eof or term.pty.closed:
            self._stop_reading(term)
            self._spawn(self._wait_exit(term))
        elif self._blocked(term):
            self._stop_reading(term)  # resumed by an acknowledgement
        elif term.pty.read_fd != term.reading_fd:
            self._read(term)  # the drain ended: the master itself is read now

    def _keep(self, term: KeptTerminal, data: bytes) -> None:
        term.ring += data
        over = len(term.ring) - self.ring_size
        if over > 0:
            del term.ring[:over]
            term.start += over

    def _pump_soon(self, term: KeptTerminal) -> None:
        """Send now, or with what follows when a message went out less than SEND_GAP_S
        ago (a key's echo goes at once; a flood goes in fewer, larger messages)."""
        loop = asyncio.get_running_loop()
        wait = term.sent_at + SEND_GAP_S - loop.time()
        if wait <= 0:
            self._pump(term)
        elif term.send_later is None:
            term.send_later = loop.call_later(wait, self._pump, term)

    def _pump(self, term: KeptTerminal) -> None:
        if term.send_later is not None:
            term.send_later.cancel()
            term.send_later = None
        for viewer in list(term.viewers):
            if viewer.piped and not self._to_pipe(term, viewer):
                continue  # the view closed its end
            while (
                not viewer.piped
                and viewer.sent < term.end
                and (viewer.sent - viewer.acked < self.window)
            ):
                begin = viewer.sent - term.start
                piece = bytes(term.ring[begin : begin + CHUNK])
                viewer.view.notify("term/output", {"term": term.id, "at": viewer.sent}, piece)
                viewer.sent += len(piece)
                term.sent_at = asyncio.get_running_loop().time()
            if term.exit_code is not None and viewer.sent == term.end and not viewer.told_exit:
                viewer.told_exit = True
                self._close_pipe(viewer)  # all of it is in the pipe: the view reads its end
                ended = {"term": term.id, "code": term.exit_code, "at": term.end}
                if isinstance(term.pty, PipedProgram):  # a failed agent's last words
                    ended["stderr"] = term.pty.stderr_text()
                viewer.view.notify("term/exit", ended)
        if not self._blocked(term) and term.exit_code is None and not term.pty.eof:
            self._read(term)

    def _to_pipe(self, term: KeptTerminal, viewer: _Viewer) -> bool:
        """Write what the view's pipe has not had, as far as it takes it (the rest when
        it can take more); False when the view closed its end (it is let go)."""
        fd = viewer.pipe
        if fd is None:
            return True
        loop = asyncio.get_running_loop()
        while viewer.sent < term.end:
            begin = viewer.sent - term.start
            try:
                written = os.write(fd, term.ring[begin : begin + CHUNK])
            except BlockingIOError:
                if not viewer.waiting:
                    viewer.waiting = True
                    loop.add_writer(fd, self._pump, term)
                return True
            except OSError:  # EPIPE: the view closed its end (a pane closed, kept running)
                self._close_pipe(viewer)
                term.viewers.remove(viewer)
                return False
            viewer.sent += written
            viewer.acked = viewer.sent
        if viewer.waiting:
            viewer.waiting = False
            loop.remove_writer(fd)
        return True

    def _close_pipe(self, viewer: _Viewer) -> None:
        fd, viewer.pipe = viewer.pipe, None
        if fd is None:
            return
        if viewer.waiting:
            viewer.waiting = False
            with contextlib.suppress(ValueError, OSError, RuntimeError):
                asyncio.get_running_loop().remove_writer(fd)
        with contextlib.suppress(OSError):
            os.close(fd)

    async def _wait_exit(self, term: KeptTerminal) -> None:
        while (code := term.pty.poll()) is None:
            await asyncio.sleep(EXIT_POLL_S)
        term.exit_code = code
        self._pump(term)
        self._changed()

    async def _flush_later(self, term: KeptTerminal) -> None:
        while term.pty.pending_input and not term.pty.closed:
            await asyncio.sleep(0.01)
            term.pty.flush()

    def _spawn(self, work: Any) -> None:
        task = asyncio.get_running_loop().create_task(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    def _changed(self) -> None:
        if self.on_change is not None:
            self.on_change()


# -- the host protocol's term/* methods (docs/host-protocol.md) --------------------------

Method = Callable[[Any, dict[str, Any]], Awaitable[Any]]


def terminal_methods(terminals: KeptTerminals) -> dict[str, Method]:
    """The requests a view sends about terminals, for a host's dispatch table; each
    takes (view, params). Bad params raise KeyError, TypeError or TerminalError."""

    async def open_(view: View, params: dict[str, Any]) -> Any:
        folder = os.path.realpath(str(params["folder"]))
        if not os.path.isdir(folder):
            raise TerminalError(f"{folder!r} is not a folder on this host")
        command = params.get("command")
        env = {str(k): str(v) for k, v in (params.get("env") or {}).items()}
        columns, rows = int(params.get("columns", 80)), int(params.get("rows", 24))
        argv = [str(part) for part in params.get("argv") or []] or None
        term = terminals.open(
            folder, str(command) if command else None, columns, rows, env,
            argv=argv, pipes=bool(params.get("pipes")), source=str(params.get("source") or ""),
        )  # fmt: skip
        return term.describe()  # the view attaches once it knows the id: nothing unheard

    async def attach(view: View, params: dict[str, Any]) -> Any:
        since = params.get("since")
        size = (int(params["columns"]), int(params["rows"])) if "columns" in params else None
        term_id = str(params["term"])
        pipe = None
        if params.get("pipe"):  # a view on this machine: the output through a pipe
            terminals.get(term_id)  # no pipe handed over for a terminal that is not here
            pipe = view.hand_pipe(term_id)
        attached = terminals.attach(
            term_id, view, int(since) if since is not None else None, size, pipe=pipe
        )
        return {**attached, "pipe": True} if pipe is not None else attached

    async def input_(view: View, params: dict[str, Any]) -> Any:
        terminals.input(str(params["term"]), base64.b64decode(str(params["data"])))
        return {}

    async def resize(view: View, params: dict[str, Any]) -> Any:
        terminals.resize(str(params["term"]), int(params["columns"]), int(params["rows"]))
        return {}

    async def ack(view: View, params: dict[str, Any]) -> Any:
        terminals.ack(str(params["term"]), view, int(params["through"]))
        return {}

    async def close(view: View, params: dict[str, Any]) -> Any:
        terminals.close(str(params["term"]))
        return {}

    async def list_(view: View, params: dict[str, Any]) -> Any:
        folder = params.get("folder")
        wanted = os.path.realpath(str(folder)) if folder else None
        return {"terminals": terminals.list(wanted, view)}

    return {
        "term/open": open_,
        "term/attach": attach,
        "term/input": input_,
        "term/resize": resize,
        "term/ack": ack,
        "term/close": close,
        "term/list": list_,
    }
