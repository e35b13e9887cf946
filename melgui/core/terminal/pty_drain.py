"""A small process that drains a pty into a large pipe, so a program's output never
waits for melgui's GIL.

The pty's master holds about 4 KB of output for its reader. A program that writes
faster than that (a `cat` of a big log, a build) blocks until it is read. melgui's
reader thread can read only between avt's parses, which hold the GIL, so the program,
the kernel's pty work and the parse took turns instead of running at once. On the
50 MB flood of bench_panes.py the pane ran at about a third of the emulator's own speed.
The drain is a second process that does nothing but read the master and write into a
pipe of up to 1 MB. It keeps the pty drained on one core while the pane parses on the
other; in a Qt-free prototype the same flood then went about as fast as the emulator
alone, and sometimes faster (the kernel turns \\n into \\r\\n beside the parse).

The drain is a `python -I -S -c` loop (a `cat` cannot be used: the master is
non-blocking for melgui's writes, and `cat` quits on EAGAIN). It ends when the
terminal's last writer has gone (EIO, as a master read reports it), when melgui has
gone (its pipe breaks, or its parent is no longer melgui), or when it is killed. It is
started in a session of its own, so a Ctrl-C at melgui's own terminal does not reach
it, with its signals reset as every child of melgui's (`child_preexec`). It runs at
nice 5, as the pane's reader thread does: on a busy machine the window's thread wins
(at nice 0 the flood's stall went from ~8 to ~18 ms).
A frozen bundle has no Python to run it with, and then panes read the master directly,
as they do when the drain cannot start. When its pipe closes, `PtySession` reads the
master: EIO there means the output is complete, anything else that the drain died
early and the master is read from then on.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import subprocess
import sys

from melgui.core.runtime.processes import child_preexec

PIPE_SIZE = 1 << 20  # the pipe's capacity (Linux's default limit for a user)
PARENT_CHECK_S = 0.25  # how often an idle drain looks whether melgui is still there
RELAY_NICE = 5  # as the pane's reader thread: the window's thread wins a busy CPU

# Ends on EIO (the terminal's writers have gone), a broken pipe or a new parent.
_CODE = f"""
import os, select, sys
os.nice({RELAY_NICE})
parent = int(sys.argv[1])  # melgui, which may have gone already
poller = select.poll()
poller.register(0, select.POLLIN)
try:
    while True:
        if not poller.poll({int(PARENT_CHECK_S * 1000)}):
            if os.getppid() != parent:
                break
            continue
        try:
            data = os.read(0, 65536)
        except BlockingIOError:
            continue
        if not data:
            break
        view = memoryview(data)
        while view:
            view = view[os.write(1, view):]
except OSError:
    pass
"""


class PtyDrain:
    """One drain process: `read_fd` is the pipe's read end (non-blocking)."""

    def __init__(self, process: subprocess.Popen[bytes], read_fd: int) -> None:
        self.process = process
        self.read_fd: int | None = read_fd

    @property
    def pid(self) -> int:
        return self.process.pid

    def stop(self) -> None:
        """Kill it and close the pipe. Safe to repeat."""
        if self.process.poll() is None:
            with contextlib.suppress(OSError):
                self.process.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=2.0)
        self.close_pipe()

    def close_pipe(self) -> None:
        if self.read_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self.read_fd)
            self.read_fd = None


def start_pty_drain(master: int) -> PtyDrain | None:
    """A drain draining `master`, or None where it cannot run (the caller reads the
    master itself)."""
    if getattr(sys, "frozen", False) or not sys.executable or sys.platform != "linux":
        return None
    read_fd, write_fd = os.pipe()
    with contextlib.suppress(OSError):
        fcntl.fcntl(write_fd, fcntl.F_SETPIPE_SZ, PIPE_SIZE)
    try:
        process = subprocess.Popen(
            [sys.executable, "-I", "-S", "-c", _CODE, str(os.getpid())],
            stdin=master,
            stdout=write_fd,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            close_fds=True,
            preexec_fn=child_preexec(),
        )
    except (OSError, subprocess.SubprocessError):
        os.close(read_fd)
        return None
    finally:
        os.close(write_fd)
    os.set_blocking(read_fd, False)
    return PtyDrain(process, read_fd)
