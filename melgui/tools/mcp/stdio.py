"""A stdio MCP server as melgui starts every child: default signals, its own process group.

The SDK's `stdio_client` spawns through anyio, which takes no `preexec_fn`; this
transport spawns with `preexec_fn=reset_signals` and `start_new_session=True` (so the
server and anything it starts share one process group) and hands the SDK's ClientSession
the same pair of streams. Stopping closes stdin, waits, then SIGTERMs and SIGKILLs the
whole group: no orphans, even of a server that forked helpers.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import os
import signal
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field

import anyio
import mcp_types as types
from mcp.client._transport import TransportStreams
from mcp.shared.message import SessionMessage

from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import forked_here, reset_signals, spawn
from melgui.core.transports.http.replies import one_line
from melgui.tools.mcp.wire_lines import HEAD_BYTES, error_reply, oversized, read_line

LINE_LIMIT = 32 * 1024 * 1024  # one JSON-RPC message
EXIT_GRACE = 2.0  # seconds after stdin closes before SIGTERM, then before SIGKILL

# Process groups of servers still running. If melgui exits without stopping them (a
# shutdown that ran out of time), they are killed at interpreter exit, not orphaned.
_LIVE_GROUPS: set[int] = set()


@atexit.register
def _kill_leftovers() -> None:
    for pgid in list(_LIVE_GROUPS):
        _signal_group(pgid, signal.SIGKILL)
    _LIVE_GROUPS.clear()


@dataclass
class StdioProcess:
    """The running server: its pid (also its process group) and when its output ended."""

    process: asyncio.subprocess.Process
    closed: asyncio.Event = field(default_factory=asyncio.Event)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode


def _parse(line: str) -> SessionMessage | Exception:
    try:
        return SessionMessage(types.jsonrpc_message_adapter.validate_json(line, by_name=False))
    except ValueError as exc:
        why = f"malformed message from the server: {line[:200]!r} ({one_line(str(exc), 200)})"
        return error_reply(line[:HEAD_BYTES].encode(), why) or ValueError(why)


async def _wait_exit(process: asyncio.subprocess.Process, timeout: float) -> bool:
    with contextlib.suppress(TimeoutError):
        await within(process.wait(), timeout)
    return process.returncode is not None


def _signal_group(pgid: int, number: signal.Signals) -> None:
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, number)


async def stop_process(process: asyncio.subprocess.Process, grace: float = EXIT_GRACE) -> None:
    """Close stdin, wait, SIGTERM the group, wait, SIGKILL the group."""
    if process.stdin is not None:
        with contextlib.suppress(OSError, RuntimeError):
            process.stdin.close()
    exited = await _wait_exit(process, grace)
    # The group outlives its leader when the server started helpers: end them too.
    _signal_group(process.pid, signal.SIGTERM)
    if not exited and not await _wait_exit(process, grace):
        _signal_group(process.pid, signal.SIGKILL)
        await _wait_exit(process, grace)
    else:
        await asyncio.sleep(0)
        _signal_group(process.pid, signal.SIGKILL)


@asynccontextmanager
async def stdio_server(
    command: str,
    args: list[str],
    *,
    env: dict[str, str],
    cwd: str,
    on_stderr: Callable[[str], None],
    on_started: Callable[[StdioProcess], None] | None = None,
) -> AsyncIterator[TransportStreams]:
    """Start the server and yield (read, write) streams for ClientSession.

    Raises OSError when the command cannot be started.
    """
    process = await spawn(
        command,
        *args,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        cwd=cwd,
        env=env,
        start_new_session=True,
        preexec_fn=forked_here(reset_signals),
        limit=LINE_LIMIT,
    )
    handle = StdioProcess(process)
    _LIVE_GROUPS.add(process.pid)
    if on_started is not None:
        on_started(handle)
    read_writer, read_stream = anyio.create_memory_object_stream[SessionMessage | Exception](0)
    write_stream, write_reader = anyio.create_memory_object_stream[SessionMessage](0)

    async def read_stdout() -> None:
        assert process.stdout is not None
        try:
            async with read_writer:
                while True:
                    raw, size = await read_line(process.stdout)
                    if not size:
                        break
                    if size > LINE_LIMIT:
                        await read_writer.send(oversized(raw, size, LINE_LIMIT))
                        continue
                    line = raw.decode("utf-8", errors="replace").strip()
                    if line:
                        await read_writer.send(_parse(line))
        except (anyio.ClosedResourceError, anyio.BrokenResourceError):
            pass
        finally:
            handle.closed.set()

    async def read_stderr() -> None:
        assert process.stderr is not None
        while True:
            try:
                raw = await process.stderr.readline()
            except ValueError:
                raw = await process.stderr.read(LINE_LIMIT)
            if not raw:
                return
            on_stderr(raw.decode("utf-8", errors="replace").rstrip("\n"))

    async def write_stdin() -> None:
        assert process.stdin is not None
        try:
            async with write_reader:
                async for message in write_reader:
                    data = message.message.model_dump_json(by_alias=True, exclude_unset=True)
                    process.stdin.write(data.encode("utf-8") + b"\n")
                    await process.stdin.drain()
        except (OSError, anyio.ClosedResourceError, anyio.BrokenResourceError):
            await read_writer.aclose()  # the session sees the end instead of waiting

    tasks = [asyncio.ensure_future(job()) for job in (read_stdout, read_stderr, write_stdin)]
    try:
        yield read_stream, write_stream
    finally:
        await asyncio.shield(stop_process(process))
        _LIVE_GROUPS.discard(process.pid)
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        for stream in (read_stream, write_stream, read_writer, write_reader):
            await stream.aclose()
