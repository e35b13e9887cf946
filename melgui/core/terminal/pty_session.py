"""A program running in a real pseudo-terminal, Qt-free.

The program gets its own session (setsid) with the pty as controlling terminal, so
Ctrl-C, job control and SIGWINCH work as in any terminal. It starts through `setsid -c`
(vfork, no Python in the child) when no signal needs resetting, else from a fork of
melgui that takes the terminal before exec (`_start`). The master side is
non-blocking: `read()` never waits, `write()` queues what the pty cannot take yet.
Output is read through a drain process (core/terminal/pty_drain.py) that keeps the pty
drained into a large pipe, or from the master itself where there is none.
Closing ends every process of the session (SIGHUP, then SIGKILL after a grace).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import functools
import os
import pwd
import shutil
import signal
import struct
import subprocess
import sys
import termios
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol

from melgui.core.runtime.processes import chain, child_preexec
from melgui.core.terminal.pty_drain import PtyDrain, start_pty_drain

READ_CHUNK = 65536
SETTLE_S = 0.05  # at most this long for the drain to pass on what an ended program wrote


class PtyError(Exception):
    """The program could not be started; the message is for people."""


def login_shell() -> str:
    """The user's shell: $SHELL, then the password database, then /bin/sh."""
    candidates = [os.environ.get("SHELL", "")]
    with contextlib.suppress(KeyError):
        candidates.append(pwd.getpwuid(os.getuid()).pw_shell)
    for shell in candidates:
        if shell and os.access(shell, os.X_OK):
            return shell
    return shutil.which("bash") or "/bin/sh"


def command_argv(command: str | None) -> list[str]:
    """argv for a pane: the login shell when no command, else `shell -c command`."""
    shell = login_shell()
    if command is None or not command.strip():
        return [shell]
    return [shell, "-c", command]


def terminal_env(base: Mapping[str, str] | None = None) -> dict[str, str]:
    env = dict(os.environ if base is None else base)
    env["TERM"] = "xterm-256color"
    env["COLORTERM"] = "truecolor"
    # Programs must ask the pty for their size, or a resize would never reach them.
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    return env


def _set_size(fd: int, columns: int, rows: int) -> None:
    fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", rows, columns, 0, 0))


def _waiting_bytes(fd: int) -> int:
    """Bytes the terminal holds for its reader."""
    try:
        count: int = struct.unpack("i", fcntl.ioctl(fd, termios.FIONREAD, b"\0" * 4))[0]
        return count
    except OSError:
        return 0


class Pty(Protocol):
    """What a terminal pane and its reader use of a program in a pty: a PtySession here,
    or a remote one read through a local pipe (melgui/remote/remote_pty.py)."""

    columns: int
    rows: int

    @property
    def pid(self) -> int:
        """The program's pid here; 0 when it runs elsewhere (nothing to wait for here)."""
        ...

    @property
    def read_fd(self) -> int | None: ...

    @property
    def eof(self) -> bool: ...

    @property
    def exit_code(self) -> int | None: ...

    @property
    def pending_input(self) -> int: ...

    @property
    def closed(self) -> bool: ...

    def read(self, limit: int = READ_CHUNK) -> bytes: ...

    def settle(self, timeout: float = SETTLE_S) -> None: ...

    def write(self, data: bytes) -> None: ...

    def flush(self) -> None: ...

    def resize(self, columns: int, rows: int) -> None: ...

    def poll(self) -> int | None: ...

    def session_pids(self) -> list[int]: ...

    def terminate(self) -> None: ...

    def finish(self) -> int | None: ...

    def close(self, grace: float = 1.0) -> int | None: ...


def _make_controlling_tty() -> None:  # runs in the child between fork and exec
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


def _start(
    argv: list[str], slave: int, folder: Path, env: dict[str, str]
) -> subprocess.Popen[bytes]:
    """The program in a session of its own whose controlling terminal is `slave`.

    A `preexec_fn` (to take the terminal) makes subprocess fork the whole interpreter and
    run Python in the child: milliseconds on the thread that opens the pane, more the
    larger melgui is (a window's process). `setsid -c` (util-linux 2.24 on, BusyBox) makes
    the session and takes its stdin as controlling terminal between its exec and the
    program's, so when no signal needs resetting (`child_preexec`: the child inherits
    nothing ignored or blocked) the program starts with vfork through it. Its pid is the
    program's (setsid forks only a group leader, which a child of melgui is not). A
    program that would not be found or run is left to the fork, whose error names it.
    """
    if child_preexec() is None and (setsid := _setsid()) and _runnable(argv[0], folder, env):
        return subprocess.Popen(
            [setsid, "-c", *argv], stdin=slave, stdout=slave, stderr=slave, cwd=folder,
            env=env, close_fds=True,
        )  # fmt: skip
    return subprocess.Popen(
        argv, stdin=slave, stdout=slave, stderr=slave, cwd=folder, env=env,
        start_new_session=True, preexec_fn=chain(_make_controlling_tty), close_fds=True,
    )  # fmt: skip


@functools.cache
def _setsid() -> str | None:
    """A setsid that takes the terminal (`-c`), or None: asked once (its usage names -c)."""
    found = shutil.which("setsid")
    if found is None or sys.platform != "linux":
        return None
    try:
        usage = subprocess.run(
            [found, "--help"], capture_output=True, stdin=subprocess.DEVNULL, timeout=5,
            check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    return found if b"-c" in usage.stdout + usage.stderr else None


def _runnable(program: str, folder: Path, env: Mapping[str, str]) -> bool:
    """`program` is found and executable where exec looks (env's PATH, or a path; a
    relative one from `folder`, where the child runs)."""
    if "/" in program:
        candidates = [program]
    else:
        candidates = [os.path.join(entry or ".", program) for entry in os.get_exec_path(env)]
    for candidate in candidates:
        path = os.path.join(folder, candidate)  # an absolute candidate stays as it is
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return True
    return False


class PtySession:
    """One program in one pseudo-terminal.

    Raises PtyError when the program cannot be started (missing, not executable,
    bad folder).
    """

    def __init__(
        self,
        argv: Sequence[str],
        *,
        cwd: str | os.PathLike[str],
        env: Mapping[str, str] | None = None,
        columns: int = 80,
        rows: int = 24,
        drain: bool = True,
    ) -> None:
        if not argv:
            raise PtyError("No program to run.")
        folder = Path(cwd)
        if not folder.is_dir():
            raise PtyError(f"Cannot start {argv[0]}: folder {folder} does not exist.")
        self.argv = list(argv)
        self.columns, self.rows = max(1, columns), max(1, rows)
        environment = terminal_env(env)
        master, slave = os.openpty()
        try:
            _set_size(slave, self.columns, self.rows)
            self._proc = _start(self.argv, slave, folder, environment)
        except OSError as exc:
            os.close(master)
            raise PtyError(f"Cannot start {argv[0]}: {exc.strerror or exc}.") from exc
        except subprocess.SubprocessError as exc:
            os.close(master)
            raise PtyError(f"Cannot start {argv[0]}: {exc}.") from exc
        finally:
            os.close(slave)
        os.set_blocking(master, False)
        self._fd: int | None = master
        self._drain: PtyDrain | None = start_pty_drain(master) if drain else None
        self._pending = b""
        self._eof = False

    # -- identity ---------------------------------------------------------------------

    @property
    def pid(self) -> int:
        return self._proc.pid

    @property
    def fd(self) -> int | None:
        """The master descriptor (the terminal itself); None once closed."""
        return self._fd

    @property
    def read_fd(self) -> int | None:
        """The descriptor to watch for output: the drain's pipe, else the master. It
        changes when the pipe closes (the master is then read directly)."""
        if self._drain is not None and self._drain.read_fd is not None:
            return self._drain.read_fd
        return self._fd

    @property
    def drain_pid(self) -> int | None:
        return self._drain.pid if self._drain is not None else None

    @property
    def eof(self) -> bool:
        """True once every writer of the terminal has gone (no more output will come)."""
        return self._eof

    # -- output -----------------------------------------------------------------------

    def read(self, limit: int = READ_CHUNK) -> bytes:
        """What the program wrote, without waiting; b"" when nothing is there yet."""
        fd = self.read_fd
        if fd is None or self._eof:
            return b""
        try:
            data = os.read(fd, limit)
        except BlockingIOError:
            return b""
        except OSError as exc:
            if exc.errno in (errno.EIO, errno.EBADF):  # Linux: the slave side closed
                return self._at_eof()
            raise
        if data:
            return data
        if self._drain is not None and fd == self._drain.read_fd:
            # The drain has gone: the master tells whether the terminal ended (EIO) or
            # the drain died early (what it had not taken is still there).
            self._drain.close_pipe()
            return self.read(limit)
        return self._at_eof()

    def settle(self, timeout: float = SETTLE_S) -> None:
        """Wait (at most `timeout`) until the drain has taken what the program wrote
        before now from the pty; then `read()` finds it. Call when the program ended:
        its last lines are interpreted before its exit is told."""
        master = self._fd
        if master is None or self.read_fd == master:
            return  # closed, or no drain between (nothing to wait for)
        deadline = time.monotonic() + timeout
        quiet = 0
        while quiet < 2 and time.monotonic() < deadline:
            quiet = quiet + 1 if _waiting_bytes(master) == 0 else 0
            time.sleep(0.001)  # twice empty a moment apart: nothing was in the drain's hands

    def _at_eof(self) -> bytes:
        self._eof = True
        return b""

    # -- input ------------------------------------------------------------------------

    def write(self, data: bytes) -> None:
        """Queue `data` for the program and send as much as the pty takes now."""
        if self._fd is None:
            return
        self._pending += data
        self.flush()

    @property
    def pending_input(self) -> int:
        """Bytes queued but not yet taken by the pty (call flush() again later)."""
        return len(self._pending)

    def flush(self) -> None:
        while self._pending and self._fd is not None:
            try:
                sent = os.write(self._fd, self._pending)
            except BlockingIOError:
                return
            except OSError:  # the program is gone: nobody will read this
                self._pending = b""
                return
            self._pending = self._pending[sent:]

    # -- size -------------------------------------------------------------------------

    def resize(self, columns: int, rows: int) -> None:
        """Set the terminal size; the kernel sends SIGWINCH to the foreground group."""
        columns, rows = max(1, columns), max(1, rows)
        if (columns, rows) == (self.columns, self.rows) or self._fd is None:
            return
        self.columns, self.rows = columns, rows
        try:
            _set_size(self._fd, columns, rows)
        except OSError:
            return
        # Some programs sit in another group than the foreground; tell the leader too.
        self._signal_group(signal.SIGWINCH)

    # -- life -------------------------------------------------------------------------

    def poll(self) -> int | None:
        """The exit code once the program has ended (negative: killed by that signal)."""
        return self._proc.poll()

    @property
    def exit_code(self) -> int | None:
        return self._proc.returncode

    def send_signal(self, signum: int) -> None:
        """Signal every process of the terminal's session."""
        pids = self.session_pids()
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signum)
        if self._proc.pid not in pids:
            # Not its session's leader yet (`setsid -c` between its exec and its
            # setsid()), or ended: Popen signals it while it is not reaped.
            with contextlib.suppress(OSError):
                self._proc.send_signal(signum)
        self._signal_group(signum)

    def _signal_group(self, signum: int) -> None:
        with contextlib.suppress(OSError):
            os.killpg(self._proc.pid, signum)

    def session_pids(self) -> list[int]:
        """Processes whose session is this terminal's (the program and its children)."""
        return session_members(self._proc.pid)

    def terminate(self) -> None:
        """Ask everything in the terminal to end (SIGHUP, as when a terminal closes)."""
        self.send_signal(signal.SIGHUP)
        self.send_signal(signal.SIGCONT)  # a stopped job must wake to see the hangup

    def kill(self) -> None:
        self.send_signal(signal.SIGKILL)

    def close(self, grace: float = 1.0) -> int | None:
        """End the program and all its children, waiting at most `grace` seconds.

        Blocks; for the GUI thread, call terminate() then finish() from a timer.
        """
        self.terminate()
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and (self.poll() is None or self.session_pids()):
            time.sleep(0.02)
        return self.finish()

    def finish(self) -> int | None:
        """SIGKILL whatever is left, reap the program, release the pty. Safe to repeat."""
        if self.poll() is None or self.session_pids():
            self.kill()
        with contextlib.suppress(subprocess.TimeoutExpired):
            self._proc.wait(timeout=2.0)
        deadline = time.monotonic() + 1.0  # SIGKILL is delivered, not yet acted on
        while self.session_pids() and time.monotonic() < deadline:
            time.sleep(0.005)
        if self._drain is not None:
            self._drain.stop()
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
        self._pending = b""
        return self._proc.returncode

    @property
    def closed(self) -> bool:
        return self._fd is None


def session_members(sid: int) -> list[int]:
    """Live (non-zombie) processes of session `sid`, from /proc; [] where there is none."""
    members: list[int] = []
    try:
        entries = os.listdir("/proc")
    except OSError:
        return members
    for entry in entries:
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat", "rb") as handle:
                stat = handle.read()
        except OSError:
            continue
        # Fields after the command name, which may hold spaces and parentheses.
        fields = stat[stat.rfind(b")") + 2 :].split()
        if len(fields) > 3 and fields[0] != b"Z" and int(fields[3]) == sid:
            members.append(int(entry))
    return members


def process_alive(pid: int) -> bool:
    """True while `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as handle:
            stat = handle.read()
    except OSError:
        return False
    return stat[stat.rfind(b")") + 2 :][:1] not in (b"Z", b"X")
