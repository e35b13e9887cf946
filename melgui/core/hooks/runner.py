"""Run one hook command: JSON on its stdin, its exit code, stdout and stderr back.

A hook starts as every child melgui starts (`core/processes.py`): its own session and
process group, default signal dispositions and an empty mask (set by posix_spawn, the
fast path: a hook runs on every call it matches), and a minimal environment (PATH, HOME, the
user, the locale, plus `CLAUDE_PROJECT_DIR` and `MELGUI_PROJECT_DIR`; no API keys). It
runs in `sh -c` in the project folder. What it leaves running in its group ends when it
exits; at its timeout its whole group is killed and the run says so; a hook that cannot
start says why. Neither ends the call it belongs to.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import json.encoder
import os
import select
import signal
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from melgui.core.hooks.config import HookCommand

PASSED = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "TZ", "LANG", "LC_ALL", "LC_CTYPE")
KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL of a hook's group at its timeout
OUTPUT_CAP = 64 * 1024  # characters of stdout and of stderr kept
# A hook still running after this many seconds has its output read as it writes it.
READ_AFTER = 0.05
KEPT_BYTES = 4 * OUTPUT_CAP  # read of each stream, at most (UTF-8: 4 bytes a character)
# A hook that ends within this many seconds is waited for without the loop (`_Child`).
WAITED = 0.002
# Commands whose last run took SLOW seconds or more: their next run is left to the loop at
# once, so a slow hook (most real ones) does not hold the loop's thread for WAITED each
# time. A quick one that a busy moment made miss WAITED is waited for again next time.
SLOW = 0.02
_SLOW: set[str] = set()


@dataclass(frozen=True, slots=True)
class Ran:
    """What one hook process did."""

    exit_code: int | None  # None: it did not start, or it was killed at the timeout
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    problem: str = ""


# One encoder for every payload, its output json.dumps's: json.dumps makes a C encoder
# for each call, which after a child (its caches cold) costs more than the encoding.
# The C accelerator's (json.encoder.c_make_encoder) takes no markers: no cycle watch.
_MAKE_ENCODER: Callable[..., Callable[[Any, int], Iterable[str]]] | None = getattr(
    json.encoder, "c_make_encoder", None
)
_ENCODER = (
    None
    if _MAKE_ENCODER is None
    else _MAKE_ENCODER(
        None,  # markers
        json.JSONEncoder().default,
        json.encoder.encode_basestring_ascii,
        None,  # indent
        ": ",
        ", ",
        False,  # sort_keys
        False,  # skipkeys
        True,  # allow_nan
    )
)


def as_json(payload: Mapping[str, Any]) -> bytes:
    """`json.dumps(payload)` in UTF-8, for a payload of JSON values (no cycles)."""
    if _ENCODER is None:
        return json.dumps(payload).encode("utf-8")
    return "".join(_ENCODER(payload, 0)).encode("utf-8")


def hook_env(project: str, base: Mapping[str, str] | None = None) -> dict[str, str]:
    source = os.environ if base is None else base
    env = {name: source[name] for name in PASSED if name in source}
    env.setdefault("PATH", "/usr/bin:/bin")
    env["CLAUDE_PROJECT_DIR"] = project
    env["MELGUI_PROJECT_DIR"] = project
    return env


async def run_hook(hook: HookCommand, payload: bytes, *, cwd: str, env: Mapping[str, str]) -> Ran:
    started = time.monotonic()
    try:
        child = _Child.start(hook.command, payload, cwd=cwd, env=env)
    except OSError as exc:
        why = f"could not start: {exc.strerror or exc}"
        return Ran(None, "", "", time.monotonic() - started, problem=why)
    try:
        if hook.command not in _SLOW and child.ended_within(min(WAITED, hook.timeout)):
            out, err, status = child.finish()
        else:
            child.watch(hook.timeout - (time.monotonic() - started))
            out, err, status = await child.finished()
            if time.monotonic() - started < SLOW:  # a quick hook slowed by a busy machine
                _SLOW.discard(hook.command)
            else:
                _SLOW.add(hook.command)
    except asyncio.CancelledError:
        child.expire(signal.SIGKILL)
        raise
    finally:
        child.close()
    duration = time.monotonic() - started
    if child.expired:
        why = f"timed out after {hook.timeout:g} s; it and its children were killed"
        return Ran(None, "", "", duration, timed_out=True, problem=why)
    code = os.waitstatus_to_exitcode(status)
    if code < 0:
        code = 128 - code  # as a shell reports a death by signal N
    return Ran(code, _text(out), _text(err), duration)


_RESET = frozenset(signal.valid_signals()) - {signal.SIGKILL, signal.SIGSTOP}


class _Child:
    """A hook's process, started with posix_spawn: its own session and group, every
    signal at its default and none blocked (what `core/processes.reset_signals` does,
    done by the C library, so no Python runs between fork and exec), stdin the payload;
    its exit seen through a pidfd.

    A hook that ends within `WAITED` (`true`, a quick check) is waited for on the spot,
    the loop's thread blocked that long at most: through the loop (a reader, a wakeup, a
    resume) or a worker thread (a hand-over each way) a quick hook cost half as much
    again as the child itself. One still running then is watched by the loop (`watch`).

    Its stdout and stderr are read once it exits, all at once (what it wrote is in the
    pipes by then); one still running after `READ_AFTER` is read as it writes, so a hook
    writing more than a pipe holds goes on, and its timeout is set then (the same timer,
    moved). What its escaped children write after it exits is not waited for."""

    __slots__ = (
        *("pid", "status", "expired", "loop", "exited", "_pidfd", "_open", "_stdin", "_rest"),
        *("_readers", "_writer", "_output", "_out", "_err", "_timer"),
    )
    loop: asyncio.AbstractEventLoop  # set by `watch`, as is `exited`
    exited: asyncio.Future[None]

    def __init__(self, pid: int, pidfd: int, out: int, err: int, stdin: int, rest: bytes) -> None:
        self.pid = pid
        self._pidfd = pidfd
        self._open = [pidfd, out, err, stdin] if rest else [pidfd, out, err]
        self._stdin = stdin
        self._rest = rest
        self._readers: set[int] = set()  # the fds the loop watches for reading, and writing
        self._writer = -1
        self._output: dict[int, list[bytes]] = {out: [], err: []}
        self._out, self._err = out, err
        self._timer: asyncio.TimerHandle | None = None
        self.status: int | None = None
        self.expired = False

    @classmethod
    def start(cls, command: str, payload: bytes, *, cwd: str, env: Mapping[str, str]) -> _Child:
        pipes = [os.pipe() for _ in range(3)]
        (in_r, in_w), (out_r, out_w), (err_r, err_w) = pipes
        try:
            if len(payload) > select.PIPE_BUF:  # at most that much fits a new pipe at once
                os.set_blocking(in_w, False)
            written = _write(in_w, payload)
            actions = [
                (os.POSIX_SPAWN_DUP2, in_r, 0),
                (os.POSIX_SPAWN_DUP2, out_w, 1),
                (os.POSIX_SPAWN_DUP2, err_w, 2),
            ]
            cwd_env = {**env, "PWD": cwd}
            pid = os.posix_spawn(
                "/bin/sh",
                ["/bin/sh", "-c", f"cd {_quoted(cwd)} || exit 126\n{command}"],
                cwd_env,
                file_actions=actions,
                setsid=True,
                setsigdef=_RESET,
                setsigmask=(),
            )
        except BaseException:
            for fd in (in_r, in_w, out_r, out_w, err_r, err_w):
                os.close(fd)
            raise
        for fd in (in_r, out_w, err_w):
            os.close(fd)
        os.set_blocking(out_r, False)
        os.set_blocking(err_r, False)
        if written == len(payload):
            os.close(in_w)
        pidfd = os.pidfd_open(pid)
        return cls(pid, pidfd, out_r, err_r, in_w, payload[written:])

    def ended_within(self, seconds: float) -> bool:
        """Whether it ends within `seconds`, this thread blocked until then (its stdin
        all written: one still to be fed is left to the loop)."""
        if self._rest or seconds <= 0:
            return False
        exit_poll = select.poll()
        exit_poll.register(self._pidfd, select.POLLIN)
        return bool(exit_poll.poll(seconds * 1000))

    def finish(self) -> tuple[bytes, bytes, int]:
        """Reap it, now that it has ended, and read what it wrote."""
        self._forget(self._pidfd)
        # What the hook left running in its group ends with it (it would write on); the
        # group's id is still the unreaped hook's, so no other group is hit.
        _signal_group(self.pid, signal.SIGKILL)
        _, self.status = os.waitpid(self.pid, 0)
        self._drain(self._out)
        self._drain(self._err)
        return b"".join(self._output[self._out]), b"".join(self._output[self._err]), self.status

    def watch(self, timeout: float) -> None:
        """Have the loop watch it: its end, its stdin fed, its output read after
        `READ_AFTER`, and its group expired `timeout` seconds from now."""
        self.loop = loop = asyncio.get_running_loop()
        self.exited = loop.create_future()
        self._readers.add(self._pidfd)
        loop.add_reader(self._pidfd, self._exited)
        first = max(min(READ_AFTER, timeout), 0)
        self._timer = loop.call_later(first, self._running_on, timeout - first)
        if self._rest:
            self._feed(self._stdin, self._rest)

    def _exited(self) -> None:
        self._forget(self._pidfd)
        if not self.exited.done():
            self.exited.set_result(None)

    def _running_on(self, left: float) -> None:
        """Still running after `READ_AFTER`: read its output as it comes, and expire it
        `left` seconds on (at once when its timeout was shorter)."""
        for fd in (self._out, self._err):
            if fd in self._open:
                self._readers.add(fd)
                self.loop.add_reader(fd, self._drain, fd)
        if left > 0:
            self._timer = self.loop.call_later(left, self.expire)
        else:
            self.expire()

    def _drain(self, fd: int) -> None:
        """Read what is in `fd` now; at its end, stop watching it."""
        chunks = self._output[fd]
        while fd in self._open:
            try:
                data = os.read(fd, 65536)
            except BlockingIOError:
                return
            if not data:
                self._forget(fd)
            elif sum(map(len, chunks)) < KEPT_BYTES:  # past it, read on and drop
                chunks.append(data)

    def _feed(self, fd: int, rest: bytes) -> None:
        left = memoryview(rest)

        def writable() -> None:
            nonlocal left
            try:
                left = left[_write(fd, left) :]
            except OSError:  # the hook closed its stdin: what it did not read is dropped
                left = left[len(left) :]
            if not left:
                self._forget(fd)

        self._writer = fd
        self.loop.add_writer(fd, writable)

    def _forget(self, fd: int) -> None:
        """Stop watching `fd` (only what the loop watches costs a call) and close it."""
        if fd in self._open:
            self._open.remove(fd)
            if fd in self._readers:
                self._readers.discard(fd)
                self.loop.remove_reader(fd)
            elif fd == self._writer:
                self._writer = -1
                self.loop.remove_writer(fd)
            os.close(fd)

    async def finished(self) -> tuple[bytes, bytes, int]:
        await self.exited
        return self.finish()

    def expire(self, signum: int = signal.SIGTERM) -> None:
        """Its time is up: SIGTERM to the group, SIGKILL after a grace."""
        self.expired = True
        if self.status is None:
            _signal_group(self.pid, signum)
            if signum != signal.SIGKILL:
                self.loop.call_later(KILL_GRACE, self._kill_late)

    def _kill_late(self) -> None:
        if self.status is None:
            _signal_group(self.pid, signal.SIGKILL)

    def close(self) -> None:
        """Reap the hook if nothing did yet, and close every pipe."""
        if self._timer is not None:
            self._timer.cancel()
        if self.status is None:
            _signal_group(self.pid, signal.SIGKILL)
            with contextlib.suppress(ChildProcessError):
                _, self.status = os.waitpid(self.pid, 0)
        for fd in list(self._open):
            self._forget(fd)


def _write(fd: int, data: bytes | memoryview) -> int:
    try:
        return os.write(fd, data) if data else 0
    except BlockingIOError:
        return 0


def _quoted(path: str) -> str:
    return "'" + path.replace("'", "'\\''") + "'"


def _text(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= OUTPUT_CAP else text[:OUTPUT_CAP] + "\n[… cut]"


def _signal_group(pgid: int, signum: int) -> None:
    # not contextlib.suppress, whose object costs more than the call: every hook ends here
    try:  # noqa: SIM105
        os.killpg(pgid, signum)
    except (ProcessLookupError, PermissionError):
        pass
