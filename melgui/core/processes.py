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
from collections.abc import Callable, Mapping
from typing import IO

_UNCATCHABLE = frozenset({signal.SIGKILL, signal.SIGSTOP})


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
        return reset_signals
    try:
        ignored = signal_state()["SigIgn"]
    except (OSError, KeyError, ValueError):
        return reset_signals
    for number in _RESTORED_BY_SUBPROCESS:
        ignored &= ~(1 << (number - 1))
    return reset_signals if ignored else None


def chain(*steps: Callable[[], None]) -> Callable[[], None]:
    """One `preexec_fn` running `reset_signals` and then each step in order."""

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
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=cwd,
        env=dict(env),
        stdin=asyncio.subprocess.DEVNULL,
        stdout=output,
        stderr=output,
        start_new_session=True,
        preexec_fn=reset_signals,
    )


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
