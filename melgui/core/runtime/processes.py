"""How every child melgui starts begins life: default signal dispositions, empty mask.

A program inherits ignored signals and the blocked-signal mask across exec. melgui may
itself start with SIGINT and SIGQUIT ignored (a background job of a non-interactive
shell, many launchers) or SIGTERM ignored; without a reset, Ctrl-C in a terminal pane
would do nothing and a command's timeout could not end it gently. Terminal emulators
reset both in the child before exec; so does melgui, for panes, commands, engines,
searches and any server or agent process. A command run for the agent or the project
(the agent's commands, a worktree setup command) also gets the environment without API
keys (`command_environment`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import signal
import threading
from collections.abc import Callable, Mapping
from typing import IO, Any

_UNCATCHABLE = frozenset({signal.SIGKILL, signal.SIGSTOP})
# Children a cancel cut short while they started: each task kills one and waits for the
# watcher to report its end (`spawn`); `settle_ending` lets them finish before a loop closes.
_ENDING: set[asyncio.Task[None]] = set()


def reset_signals() -> None:
    """Every catchable signal to its default action and nothing blocked.

    Runs in the child between fork and exec (`preexec_fn`). Caught signals are reset by
    exec anyway; this matters for the ignored ones and for the mask.
    """
    for number in signal.valid_signals():
        if number in _UNCATCHABLE:
            continue
        with contextlib.suppress(OSError, ValueError, RuntimeError):
            signal.signal(number, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_SETMASK, ())


# What subprocess itself resets in the child (restore_signals=True, its default).
_RESTORED_BY_SUBPROCESS = frozenset(
    int(getattr(signal, name)) for name in ("SIGPIPE", "SIGXFSZ", "SIGXFZ") if hasattr(signal, name)
)


def child_preexec() -> Callable[[], None] | None:
    """`reset_signals` when a child started from this thread would inherit an ignored
    signal or a blocked one; None when it starts clean anyway.

    A `preexec_fn` makes subprocess fork the whole interpreter and run Python in the
    child; without one it uses vfork. For short, frequent children (a search) that is
    most of their cost beyond the program's own, so it is paid only when needed. The
    blocked mask is this thread's: call it from the thread that starts the child.
    """
    if signal.pthread_sigmask(signal.SIG_BLOCK, ()):
        return forked_here(reset_signals)
    try:
        ignored = signal_state()["SigIgn"]
    except (OSError, KeyError, ValueError):
        return forked_here(reset_signals)
    for number in _RESTORED_BY_SUBPROCESS:
        ignored &= ~(1 << (number - 1))
    return forked_here(reset_signals) if ignored else None


def forked_here(preexec: Callable[[], None]) -> Callable[[], None]:
    """`preexec`, once this thread is known to `threading`: call it in the thread that
    starts the child.

    A `preexec_fn` forks the whole interpreter, and the child runs `threading`'s
    after-fork clean-up before exec. Forked from a thread `threading` did not start (a
    QThread of the window's executor), Python 3.11's clean-up makes that thread the new
    main thread and takes a lock it only renews after: a lock another thread held at the
    fork (one starting or ending), so the child waited forever and so did the caller.
    The window tests hung on it once when run with SIGINT and SIGQUIT ignored (nohup).
    Registered (`current_thread()`), the thread is found and nothing is taken.
    """
    threading.current_thread()
    return preexec


def chain(*steps: Callable[[], None]) -> Callable[[], None]:
    """One `preexec_fn` running `reset_signals` and then each step in order; call it in
    the thread that starts the child (`forked_here`)."""
    threading.current_thread()

    def run() -> None:
        reset_signals()
        for step in steps:
            step()

    return run


async def start_group(
    argv: list[str], *, cwd: str | os.PathLike[str], env: Mapping[str, str], output: int | IO[bytes]
) -> asyncio.subprocess.Process:
    """A child in a new session and process group (so `os.killpg(proc.pid, …)` ends all it
    started), signals reset, no stdin, stdout and stderr both to `output`.

    Raises OSError when the program cannot be started.
    """
    return await spawn(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=output,
        stderr=output,
        start_new_session=True,
        preexec_fn=forked_here(reset_signals),
    )


def still_running(pid: int) -> bool:
    """Whether this process's child `pid` has not ended, looked at without reaping it
    (`waitid` with WNOWAIT): a child that has ended stays a zombie for its waiter.

    False when it has ended or is no child of ours (reaped already). Where the system
    cannot look without reaping (no `waitid`: macOS, Windows), True: the caller's signal
    then meets a process that may have ended, as before.
    """
    if not hasattr(os, "waitid"):
        return True
    try:
        ended = os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return False  # reaped already (by the loop's child watcher)
    return ended is None


def kill_unreaped(process: asyncio.subprocess.Process, signum: int = signal.SIGKILL) -> None:
    """Send `signum` (SIGKILL unless told) to an asyncio child that still runs, leaving
    its reaping to the loop's child watcher. Use it wherever melgui would call
    `process.kill()`, `terminate()` or `send_signal()` on an asyncio child.

    Those poll first (`Popen.poll`, a `waitpid`), and that poll reaps a child that has
    just exited: when the watcher's thread then waits for it (late, on a busy machine),
    asyncio finds no child, logs "Unknown child process pid N, will report returncode
    255" on stderr and reports 255 instead of the child's status. A git cancelled as the
    app quit hit it under a CPU hog.
    """
    if process.returncode is None and still_running(process.pid):
        with contextlib.suppress(ProcessLookupError):
            os.kill(process.pid, signum)


def release_pipes(process: asyncio.subprocess.Process) -> None:
    """Close an asyncio child's pipes now, without closing its transport.

    `transport.close()` polls the child when the loop has not heard it end (and kills it
    if it runs): the same reaping behind the child watcher's back as `process.kill()`.
    With its pipes closed, the transport closes itself once the watcher reports the exit.
    """
    transport = getattr(process, "_transport", None)  # asyncio names no public way to it
    if transport is None:
        return
    for number in (0, 1, 2):
        pipe = transport.get_pipe_transport(number)
        if pipe is not None:
            pipe.close()


async def spawn(*argv: str, **options: Any) -> asyncio.subprocess.Process:
    """`asyncio.create_subprocess_exec(*argv, **options)` that a cancel does not cut
    short. Use it for every asyncio child melgui starts.

    Cancelled while asyncio connects the new child's pipes, asyncio cleans up itself with
    `transport.close()`, which polls: a quick child that has already ended (a git) is
    reaped behind the child watcher, which then logs "Unknown child process". Here the
    start runs on; the child, once started, is killed (its whole group when
    `start_new_session`) without reaping it, its pipes closed, and the cancel raised when
    the watcher has reported its end (a loop closed before that has the watcher log).
    A cancel that comes before the fork stops the start: no child is made.
    """
    began = False

    async def start() -> asyncio.subprocess.Process:
        nonlocal began
        began = True  # its first step runs on to the fork: from here the child exists
        return await asyncio.create_subprocess_exec(*argv, **options)

    starting = asyncio.ensure_future(start())
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        if not began:  # not forked yet: it never will be (the caller may close its fds)
            starting.cancel()
            raise
        ending = asyncio.ensure_future(
            _end_started(starting, bool(options.get("start_new_session")))
        )
        _ENDING.add(ending)
        ending.add_done_callback(_ENDING.discard)
        await asyncio.shield(ending)  # a second cancel leaves it to `settle_ending`
        raise


async def settle_ending(timeout: float) -> None:
    """Wait, at most `timeout` seconds, for the children a cancel cut short as they
    started (`spawn`) to be killed and reaped. Call it before a loop closes: a task still
    waiting for its child then would be destroyed pending ("Task was destroyed but it is
    pending!" on stderr), and the child reaped by nobody.
    """
    loop = asyncio.get_running_loop()
    ending = [task for task in _ENDING if task.get_loop() is loop]
    if ending:
        await asyncio.wait(ending, timeout=timeout)


async def _end_started(starting: asyncio.Future[asyncio.subprocess.Process], group: bool) -> None:
    try:
        process = await starting
    except Exception:  # it could not start
        return
    if group:  # killpg reaps nothing; the leader's pid is its own until reaped
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, signal.SIGKILL)
    else:
        kill_unreaped(process)
    release_pipes(process)
    await process.wait()


def signal_state(pid: int | str = "self") -> dict[str, int]:
    """Ignored, blocked and caught signal masks of a process, from /proc (Linux).

    Used by tests and diagnostics: {"SigIgn": mask, "SigBlk": mask, "SigCgt": mask}.
    """
    masks: dict[str, int] = {}
    with open(os.path.join("/proc", str(pid), "status"), encoding="ascii") as status:
        for line in status:
            name, _, value = line.partition(":")
            if name in ("SigIgn", "SigBlk", "SigCgt"):
                masks[name] = int(value.strip(), 16)
    return masks


# What a command melgui starts for the person or the agent may see of its environment.
_SECRET_NAME = re.compile(r"(?:^|_)(?:API_?KEY|SECRET_?KEY|ACCESS_?TOKEN|AUTH_?TOKEN)$", re.I)
_SECRET_NAMES = frozenset({"MELIAI_API_KEY", "OPENAI_API_KEY", "MELGUI_API_KEY"})


def without_secrets(base: Mapping[str, str]) -> dict[str, str]:
    """`base` without API keys and tokens: what any command melgui starts may see."""
    return {
        name: value
        for name, value in base.items()
        if name not in _SECRET_NAMES and not _SECRET_NAME.search(name)
    }


def user_shell(env: Mapping[str, str]) -> str:
    """The shell run_command runs commands in: `$SHELL` when it can run, else /bin/sh."""
    shell = env.get("SHELL", "")
    if shell and os.path.isabs(shell) and os.access(shell, os.X_OK):
        return shell
    return "/bin/sh"


def command_environment(base: Mapping[str, str]) -> dict[str, str]:
    """The environment a command gets (the agent's commands, a worktree setup command):
    the app's own without API keys, and no pager."""
    env = without_secrets(base)
    env.update(
        {
            "TERM": "dumb",
            "NO_COLOR": "1",
            "PAGER": "cat",
            "GIT_PAGER": "cat",
            "GIT_TERMINAL_PROMPT": "0",
        }
    )
    return env
