"""run_command: the user's shell in the project folder, in its own process group.

stdin is /dev/null; stdout and stderr share one pipe that melgui owns, so a background
grandchild still holding it cannot keep the call waiting once the shell has exited.
A timeout or a cancellation kills the whole group.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
from collections.abc import Mapping
from dataclasses import dataclass

from melgui.core.protocol.tooling import ToolError, ToolOutcome
from melgui.core.protocol.tools.commands import RUN_COMMAND
from melgui.core.protocol.tools.definition import Tool
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import command_environment, start_group, user_shell
from melgui.tools.commands.process_output import HeadTailBuffer
from melgui.tools.commands.sandbox import SandboxSpec, bwrap_argv, sandbox_env, sandbox_status
from melgui.tools.context import ToolContext

# After the shell exits, output still in flight gets this long to arrive.
DRAIN_GRACE = 0.5
# Between SIGTERM to the group and SIGKILL.
KILL_GRACE = 1.0


class _PipeReader(asyncio.Protocol):
    def __init__(self, buffer: HeadTailBuffer) -> None:
        self.buffer = buffer
        self.closed = asyncio.get_running_loop().create_future()

    def data_received(self, data: bytes) -> None:
        self.buffer.feed(data)

    def eof_received(self) -> bool:
        return False

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.closed.done():
            self.closed.set_result(None)


def _signal_group(pgid: int, signum: int) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, signum)


async def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGTERM the group, then SIGKILL what is left of it."""
    _signal_group(proc.pid, signal.SIGTERM)
    with contextlib.suppress(TimeoutError):
        await within(asyncio.shield(proc.wait()), KILL_GRACE)
    _signal_group(proc.pid, signal.SIGKILL)
    await proc.wait()


def _exit_code(returncode: int) -> int:
    # As a shell reports it: a death by signal N is 128+N.
    return 128 - returncode if returncode < 0 else returncode


async def execute(
    command: str,
    cwd: str,
    *,
    timeout: float,
    cap: int,
    env: Mapping[str, str],
    sandbox: SandboxSpec | None = None,
) -> ToolOutcome:
    buffer = HeadTailBuffer(cap)
    argv = [user_shell(env), "-c", command]
    if sandbox is not None:
        argv = bwrap_argv(sandbox, cwd, argv)
        env = sandbox_env(env)
    read_fd, write_fd = os.pipe()
    try:
        proc = await start_group(argv, cwd=cwd, env=env, output=write_fd)
    except OSError as exc:
        os.close(read_fd)
        raise ToolError(f"Cannot start the shell: {exc.strerror or exc}.") from None
    finally:
        os.close(write_fd)
    loop = asyncio.get_running_loop()
    reader = _PipeReader(buffer)
    try:
        transport, _ = await loop.connect_read_pipe(
            lambda: reader, os.fdopen(read_fd, "rb", buffering=0)
        )
    except BaseException:  # cancelled (or failed) before the wait: still end the group
        await asyncio.shield(_kill_group(proc))
        raise
    notes: list[str] = []
    timed_out = False
    try:
        try:
            await within(asyncio.shield(proc.wait()), timeout)
        except TimeoutError:
            timed_out = True
            await asyncio.shield(_kill_group(proc))
            notes.append(
                f"[Timed out after {timeout:g} s: the command and every process it started "
                "in its group were killed.]"
            )
        try:
            await within(asyncio.shield(reader.closed), DRAIN_GRACE)
        except TimeoutError:
            notes.append(
                "[A background process still holds the output open; output after the "
                "command exited is not shown.]"
            )
    except asyncio.CancelledError:
        await asyncio.shield(_kill_group(proc))
        raise
    finally:
        transport.close()
    assert proc.returncode is not None
    if sandbox is not None:
        notes.append(f"[{sandbox.describe()}.]")
    text = f"exit_code={_exit_code(proc.returncode)}\n{buffer.text()}"
    if notes:
        text = text.rstrip("\n") + "\n" + "\n".join(notes)
    return ToolOutcome.error(text) if timed_out else ToolOutcome(text)


@dataclass(frozen=True, slots=True)
class RunCommandInput:
    command: str

    def __post_init__(self) -> None:
        if not self.command.strip():
            raise ToolError("Argument 'command' is empty.")
        if "\x00" in self.command:
            raise ToolError("Argument 'command' contains a NUL byte.")


async def run_command(context: ToolContext, given: RunCommandInput) -> ToolOutcome:
    workspace, settings, command = context.workspace, context.settings, given.command
    base_env = context.environment
    env = command_environment(os.environ if base_env is None else base_env)
    sandbox: SandboxSpec | None = None
    if settings.sandbox_commands:
        status = sandbox_status()
        if not status.available:
            raise ToolError(
                f"The sandbox is on but cannot be used: {status.message}. Turn it off where "
                "it is set (Settings → Approval, or a remote host's `sandbox` option for "
                "commands run on that machine) to run commands unsandboxed."
            )
        root = str(workspace.root)
        sandbox = SandboxSpec((root,), settings.sandbox_hidden, settings.sandbox_network)
    return await execute(
        command,
        str(workspace.root),
        timeout=settings.command_timeout,
        cap=settings.command_output_cap,
        env=env,
        sandbox=sandbox,
    )


RUN_COMMAND_TOOL = Tool(RUN_COMMAND, RunCommandInput, run_command)
