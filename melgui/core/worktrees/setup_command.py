"""The per-project setup command, run in a new worktree (install dependencies, …).

It runs in `sh -c` in its own process group with signals reset, stdin closed, stdout and
stderr together; past its timeout the whole group is ended. `MELGUI_WORKTREE` and
`MELGUI_MAIN` name the new folder and the project's, so a command can link what it needs.
Its environment is a command's, as for the agent's `run_command`: melgui's own without
API keys or tokens, and no pager.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path

from melgui.core.config.trust import FolderTrust
from melgui.core.runtime.processes import command_environment, forked_here, reset_signals

OUTPUT_KEEP = 64 * 1024  # the last this many bytes of output are kept
KILL_GRACE_S = 2.0


@dataclass(frozen=True, slots=True)
class SetupResult:
    command: str
    exit_code: int | None  # None: it did not end on its own (timeout) or did not start
    output: str
    timed_out: bool = False
    restricted: bool = False  # not run: the folder is not trusted

    @property
    def ok(self) -> bool:
        return self.exit_code == 0

    def describe(self, tail_lines: int = 20) -> str:
        """One line on how it went, then the last lines of its output."""
        if self.restricted:
            return f"Setup command `{self.command}` was not run: the folder is not trusted."
        if self.timed_out:
            head = f"Setup command `{self.command}` was stopped after its timeout."
        elif self.exit_code is None:
            head = f"Setup command `{self.command}` could not start."
        elif self.exit_code == 0:
            head = f"Setup command `{self.command}` finished."
        else:
            head = f"Setup command `{self.command}` failed (exit status {self.exit_code})."
        lines = self.output.rstrip().splitlines()[-tail_lines:]
        return "\n".join([head, *lines]) if lines else head


def _end_group(process: subprocess.Popen[bytes]) -> None:
    for sig in (signal.SIGTERM, signal.SIGKILL):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(process.pid, sig)
        try:
            process.wait(KILL_GRACE_S)
            return
        except subprocess.TimeoutExpired:
            continue


def run_setup(command: str, worktree: Path, main: Path, *, timeout: float) -> SetupResult:
    """Run `command` in `worktree`; never raises for the command's own failure. In a
    folder the person has not trusted it does not run at all."""
    if not FolderTrust().is_trusted(main):
        return SetupResult(command, None, "", restricted=True)
    env = {
        **command_environment(os.environ),
        "MELGUI_WORKTREE": str(worktree),
        "MELGUI_MAIN": str(main),
    }
    try:
        process = subprocess.Popen(
            ["/bin/sh", "-c", command],
            cwd=worktree,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            start_new_session=True,
            preexec_fn=forked_here(reset_signals),
        )
    except OSError as exc:
        return SetupResult(command, None, f"{exc.strerror or exc}")
    try:
        out, _ = process.communicate(timeout=timeout)
        timed_out = False
    except subprocess.TimeoutExpired:
        _end_group(process)
        out, _ = process.communicate()
        timed_out = True
    text = out[-OUTPUT_KEEP:].decode("utf-8", "replace")
    code = None if timed_out else process.returncode
    return SetupResult(command, code, text, timed_out)
