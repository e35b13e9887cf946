"""Run one hook command: JSON on its stdin, its exit code, stdout and stderr back.

A hook starts as every child melgui starts (`core/processes.py`): its own session and
process group, default signal dispositions, and a minimal environment (PATH, HOME, the
user, the locale, plus `CLAUDE_PROJECT_DIR` and `MELGUI_PROJECT_DIR`; no API keys). It
runs in `sh -c` in the project folder. At its timeout its whole group is killed and the
run says so; a hook that cannot start says why. Neither ends the call it belongs to.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import Mapping
from dataclasses import dataclass

from melgui.core.hooks.config import HookCommand
from melgui.core.processes import child_preexec

PASSED = ("PATH", "HOME", "TMPDIR", "USER", "LOGNAME", "TZ", "LANG", "LC_ALL", "LC_CTYPE")
KILL_GRACE = 1.0  # seconds between SIGTERM and SIGKILL of a hook's group at its timeout
OUTPUT_CAP = 64 * 1024  # characters of stdout and of stderr kept


@dataclass(frozen=True, slots=True)
class Ran:
    """What one hook process did."""

    exit_code: int | None  # None: it did not start, or it was killed at the timeout
    stdout: str
    stderr: str
    duration: float
    timed_out: bool = False
    problem: str = ""


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
        proc = await asyncio.create_subprocess_exec(
            "/bin/sh",
            "-c",
            hook.command,
            cwd=cwd,
            env=dict(env),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            preexec_fn=child_preexec(),
        )
    except OSError as exc:
        why = f"could not start: {exc.strerror or exc}"
        return Ran(None, "", "", time.monotonic() - started, problem=why)
    try:
        out, err = await asyncio.wait_for(proc.communicate(payload), hook.timeout)
    except TimeoutError:
        await asyncio.shield(_kill_group(proc))
        why = f"timed out after {hook.timeout:g} s; it and its children were killed"
        return Ran(None, "", "", time.monotonic() - started, timed_out=True, problem=why)
    except asyncio.CancelledError:
        await asyncio.shield(_kill_group(proc))
        raise
    finally:
        _end_group(proc)
    duration = time.monotonic() - started
    code = proc.returncode if proc.returncode is not None else -1
    if code < 0:
        code = 128 - code  # as a shell reports a death by signal N
    return Ran(code, _text(out), _text(err), duration)


def _text(data: bytes) -> str:
    text = data.decode("utf-8", "replace")
    return text if len(text) <= OUTPUT_CAP else text[:OUTPUT_CAP] + "\n[… cut]"


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


def _end_group(proc: asyncio.subprocess.Process) -> None:
    """Whatever the hook left running in its group (a background child) is ended too."""
    _signal_group(proc.pid, signal.SIGKILL)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(asyncio.shield(proc.wait()), KILL_GRACE)
    _signal_group(proc.pid, signal.SIGKILL)
    await proc.wait()
