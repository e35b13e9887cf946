"""Reads a terminal's output on its own thread and interprets it there, Qt-free.

The GUI thread then only paints: the reader reads what the pty holds (up to a batch),
feeds the screen in slices (avt keeps the GIL while it parses, so a slice bounds how
long the GUI thread can wait for it), prepares the runs of the live screen at most
once a frame (handing it to `prepared`, which may render it), and calls `notify` (at
most once until `acknowledge()`).

It also notices the program's end in order: the exit code is published only after
everything the program wrote before it was interpreted (a pidfd wakes the reader when
the program ends; without one, it looks every `POLL_S`).
"""

from __future__ import annotations

import contextlib
import os
import select
import sys
import threading
import time
from collections.abc import Callable

from melgui.core.terminal.pty_session import Pty
from melgui.core.terminal.runs import Frame
from melgui.core.terminal.screen import TerminalScreen

BATCH = 256 * 1024  # read at most this much before interpreting it
SLICE = 16 * 1024  # bytes per feed: ~0.5 ms of parsing holding the GIL
FRAME_S = 1 / 60  # prepare the live frame at most this often while output streams in
# While a flood fills every batch, frames (preparing and painting them) take at most
# this share of the time: the frame rate falls when frames are dear, never the reading.
FLOOD_FRAME_SHARE = 0.05
FLOOD_BYTES = 32 * 1024  # this much output between two frames is a flood
POLL_S = 0.2  # without a pidfd: how often to look for the program's end
EXIT_WAIT_S = 2.0  # after end of file: how long to wait for the program to be reaped
SWITCH_INTERVAL_S = 0.001  # see start()
READER_NICE = 5  # the GUI thread wins the CPU when both want it


class PtyReader:
    """The output side of one pane. `start()` once; `stop()` before closing the pty."""

    def __init__(
        self,
        pty: Pty,
        screen: TerminalScreen,
        notify: Callable[[], None],
        prepared: Callable[[Frame], None] | None = None,
    ) -> None:
        self._pty = pty
        self._screen = screen
        self._notify = notify
        # Called on this thread with each frame prepared (a view renders it off the
        # GUI thread); one that raises is not called again, the reading goes on.
        self._prepared = prepared
        self.prepare_error: str | None = None
        self._wake_r, self._wake_w = os.pipe()
        self._stopping = False
        self._notified = False
        self._thread = threading.Thread(target=self._run, name="pty reader", daemon=True)
        self._last_frame = 0.0
        self._prepare_cost = 0.0  # seconds the last frame took to prepare
        self._since_frame = 0  # bytes interpreted since the last frame
        self._owed = False  # interpreted output not yet in a prepared frame
        self.fed = 0  # bytes interpreted so far
        self.eof = False  # every writer of the terminal has gone
        self.exit_code: int | None = None  # the program ended; all it wrote was read
        self.error: str | None = None

    def start(self) -> None:
        # A thread waiting for the GIL asks for it after the switch interval (5 ms by
        # default) and then waits for the OS to run it: with a reader busy, the GUI
        # thread's every wake-up would start that late. 1 ms bounds the wait; it costs
        # nothing while nobody waits.
        if sys.getswitchinterval() > SWITCH_INTERVAL_S:
            sys.setswitchinterval(SWITCH_INTERVAL_S)
        self._thread.start()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def stop(self, timeout: float = 1.0) -> None:
        """End the thread (waits for it at most `timeout` seconds). Safe to repeat."""
        self._stopping = True
        with contextlib.suppress(OSError):
            os.write(self._wake_w, b"x")
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout)
        if not self._thread.is_alive():
            for fd in (self._wake_r, self._wake_w):
                with contextlib.suppress(OSError):
                    os.close(fd)
            self._wake_r = self._wake_w = -1

    def acknowledge(self) -> None:
        """The GUI took the news: the next change calls `notify` again."""
        self._notified = False

    # -- the thread ----------------------------------------------------------------------

    def _run(self) -> None:
        with contextlib.suppress(OSError, AttributeError):  # Linux: nice is per thread
            os.setpriority(os.PRIO_PROCESS, threading.get_native_id(), READER_NICE)
        try:
            self._loop()
        except Exception as exc:  # a broken reader must still say so, not vanish
            self.error = f"{type(exc).__name__}: {exc}"
            self._tell()

    def _loop(self) -> None:
        fd = self._pty.read_fd
        if fd is None:
            return
        poller = select.poll()
        poller.register(fd, select.POLLIN)
        poller.register(self._wake_r, select.POLLIN)
        pidfd = _pidfd(self._pty.pid) if self._pty.pid > 0 else None
        if pidfd is not None:
            poller.register(pidfd, select.POLLIN)
        try:
            while not self._stopping:
                events = dict(poller.poll(self._timeout_ms(pidfd is not None)))
                if self._stopping:
                    return
                if fd in events:
                    self._drain()
                    if self._pty.read_fd not in (fd, None):  # the drain died: the master
                        poller.unregister(fd)
                        fd = self._pty.read_fd
                        poller.register(fd, select.POLLIN)
                if self._owed and time.monotonic() >= self._frame_due():
                    self._frame()
                if self._pty.eof:
                    self._finish()
                    return
                ended = pidfd is not None and pidfd in events
                if ended or (pidfd is None and not events):
                    if self._check_exit():
                        if pidfd is not None:
                            poller.unregister(pidfd)
                            os.close(pidfd)
                            pidfd = None
                        self._tell()
                    elif ended:
                        time.sleep(0.005)  # the GUI thread is reaping it right now
        finally:
            if pidfd is not None:
                os.close(pidfd)

    def _timeout_ms(self, have_pidfd: bool) -> float | None:
        if self._owed:  # wake when the next frame is due, even if nothing more comes
            return max(0.0, (self._frame_due() - time.monotonic()) * 1000)
        return None if have_pidfd else POLL_S * 1000

    def _drain(self) -> None:
        """Read and interpret while the pty has output, preparing frames when due."""
        while not self._stopping:
            chunks: list[bytes] = []
            size = 0
            while size < BATCH and (chunk := self._pty.read()):
                chunks.append(chunk)
                size += len(chunk)
            if not chunks:
                return
            self._screen.feed_slices(b"".join(chunks), SLICE)
            self.fed += size
            self._since_frame += size
            self._owed = True
            if self._screen.replies_owed:
                self._tell()  # a program waits for the answer: no frame pacing for it
            if time.monotonic() >= self._frame_due():
                self._frame()

    def _frame_due(self) -> float:
        """When the next frame may be prepared: a frame apart, or further apart during a
        flood, so that frames take at most FLOOD_FRAME_SHARE of the time."""
        interval = FRAME_S
        if self._since_frame >= FLOOD_BYTES:
            cost = self._prepare_cost + self._screen.paint_cost
            interval = max(FRAME_S, cost / FLOOD_FRAME_SHARE)
        return self._last_frame + interval

    def _frame(self) -> None:
        started = time.perf_counter()
        frame = self._screen.prepare_frame()
        if self._prepared is not None:
            try:
                self._prepared(frame)
            except Exception as exc:
                self._prepared = None
                self.prepare_error = f"{type(exc).__name__}: {exc}"
        self._prepare_cost = time.perf_counter() - started
        self._last_frame = time.monotonic()
        self._since_frame = 0
        self._owed = False
        self._tell()

    def _check_exit(self) -> bool:
        if self.exit_code is not None:
            return False
        code = self._pty.poll()
        if code is None:
            return False
        self._pty.settle()  # what it wrote just before it ended, through the drain
        self._drain()
        if self._owed:
            self._frame()
        self.exit_code = code
        return True

    def _finish(self) -> None:
        if self._owed:
            self._frame()
        self.eof = True
        deadline = time.monotonic() + EXIT_WAIT_S
        while self.exit_code is None and not self._stopping and time.monotonic() < deadline:
            code = self._pty.poll()
            if code is not None:
                self.exit_code = code
                break
            time.sleep(0.005)
        self._tell()

    def _tell(self) -> None:
        if not self._notified and not self._stopping:
            self._notified = True
            self._notify()


def _pidfd(pid: int) -> int | None:
    """A descriptor readable when `pid` ends (Linux 5.3+), or None."""
    opener = getattr(os, "pidfd_open", None)
    if opener is None:
        return None
    try:
        return int(opener(pid))
    except OSError:
        return None
