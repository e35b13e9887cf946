"""A program on plain pipes, kept by a host as a terminal is (melgui/core/terminal/kept.py),
for a protocol spoken over its stdio: a remote folder's ACP agent.

    program = PipedProgram(["agent", "--acp"], cwd="/srv/p", env=os.environ)

It has the surface of a PtySession that KeptTerminals uses (read_fd, read, write, flush,
poll, close, …), but no pty: its stdout's bytes pass unchanged (no echo, no line
discipline), and its stderr, which would break the protocol's lines, is kept apart as a
tail of lines (`stderr_text`: what a failed agent's pane shows). It runs in a session
of its own, so closing it ends everything it started.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import threading
import time
from collections import deque
from collections.abc import Mapping, Sequence

from melgui.core.runtime.processes import forked_here, reset_signals
from melgui.core.terminal.pty_session import PtyError

TAIL_LINES = 40


class PipedProgram:
    def __init__(self, argv: Sequence[str], *, cwd: str, env: Mapping[str, str]) -> None:
        if not argv:
            raise PtyError("No program to run.")
        self.argv = list(argv)
        self.columns, self.rows = 80, 24
        try:
            self._proc = subprocess.Popen(
                self.argv,
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                cwd=cwd,
                env=dict(env),
                start_new_session=True,
                preexec_fn=forked_here(reset_signals),
                bufsize=0,
            )
        except OSError as exc:
            raise PtyError(f"Cannot start {self.argv[0]}: {exc.strerror or exc}") from None
        assert self._proc.stdin and self._proc.stdout and self._proc.stderr
        self._in: int | None = self._proc.stdin.fileno()
        self._out: int | None = self._proc.stdout.fileno()
        os.set_blocking(self._in, False)
        os.set_blocking(self._out, False)
        self._eof = False
        self._pending = bytearray()
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._stderr = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr.start()

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def read_fd(self) -> int | None:
        return self._out

    @property
    def eof(self) -> bool:
        return self._eof

    @property
    def closed(self) -> bool:
        return self._out is None

    def read(self, limit: int = 65536) -> bytes:
        if self._out is None or self._eof:
            return b""
        try:
            data = os.read(self._out, limit)
        except BlockingIOError:
            return b""
        if not data:
            self._eof = True
        return data

    def write(self, data: bytes) -> None:
        if self._in is None:
            return
        self._pending += data
        self.flush()

    @property
    def pending_input(self) -> int:
        return len(self._pending)

    def flush(self) -> None:
        while self._pending and self._in is not None:
            try:
                written = os.write(self._in, self._pending)
            except BlockingIOError:
                return
            except OSError:  # the program closed its stdin (or ended)
                self._pending.clear()
                return
            del self._pending[:written]

    def resize(self, columns: int, rows: int) -> None:
        return None  # no screen

    def poll(self) -> int | None:
        return self._proc.poll()

    def session_pids(self) -> list[int]:
        return [] if self._proc.poll() is not None else [self._proc.pid]

    def stderr_text(self) -> str:
        return "\n".join(self._tail)

    def _read_stderr(self) -> None:
        stream = self._proc.stderr
        assert stream is not None
        with contextlib.suppress(OSError, ValueError):
            for line in iter(stream.readline, b""):
                self._tail.append(line.decode(errors="replace").rstrip("\n"))

    def finish(self) -> int | None:
        for stream in (self._proc.stdin, self._proc.stdout):
            with contextlib.suppress(OSError):
                if stream is not None:
                    stream.close()
        self._in = self._out = None
        return self._proc.poll()

    def close(self, grace: float = 1.0) -> int | None:
        """Close its stdin (an agent's cue to end), then SIGTERM and SIGKILL its session."""
        if self._proc.stdin is not None:
            with contextlib.suppress(OSError):
                self._proc.stdin.close()
            self._in = None
        for sig in (None, signal.SIGTERM, signal.SIGKILL):
            if sig is not None:
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.killpg(self._proc.pid, sig)
            deadline = time.monotonic() + grace
            while self._proc.poll() is None and time.monotonic() < deadline:
                time.sleep(0.02)
            if self._proc.poll() is not None:
                break
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self._proc.pid, signal.SIGKILL)  # what it started and left behind
        return self.finish()
