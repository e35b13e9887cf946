"""The agent's child process: started with melgui's signal reset, its stderr kept as a tail.

Stdout and stdin carry the protocol (each line checked to be one JSON-RPC message, nested
no deeper than the decoder's cap); stderr is read all along (so a chatty agent never
blocks on a full pipe) and its last lines are what a failed pane shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import Mapping
from typing import Any

from melgui.core.deadline import within
from melgui.core.processes import forked_here, release_pipes, reset_signals, spawn
from melgui.core.protocol import bounded_json
from melgui.core.protocol.views.agent_commands import AgentCommand

STREAM_LIMIT = 64 * 1024 * 1024  # one protocol line may carry a whole file
TAIL_LINES = 40
FEED_SLICE_S = 0.004  # at most this long handing on protocol lines before a pause
LINES_PER_PAUSE = 16  # protocol lines the SDK reads before the loop gets a turn


class PacedReader(asyncio.StreamReader):
    """The protocol lines as the SDK reads them, with a pause every LINES_PER_PAUSE.

    While lines are buffered the SDK reads message after message without letting the
    loop go, starting a task for each: a burst of 20,000 updates left thousands of them
    alive at once, which outlived the young garbage generations and set off two or three
    full collections a turn (100-270 ms each, the pane's longest stalls). Pausing every
    few lines lets those tasks finish first; profiled with bench/bench_acp_pane.py.
    """

    _lines = 0

    async def readuntil(self, separator: Any = b"\n") -> bytes:
        self._lines += 1
        if self._lines % LINES_PER_PAUSE == 0:
            await asyncio.sleep(0)
        return await super().readuntil(separator)


class AgentStartError(Exception):
    """The agent's program could not be started; the message says why."""


class AgentProcess:
    """One running agent program."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        loop = asyncio.get_running_loop()
        self._stderr_done = loop.create_task(self._read_stderr())
        # What the SDK reads: the agent's stdout, line by line, once checked to be JSON.
        self.messages = PacedReader(limit=STREAM_LIMIT)
        self.malformed: asyncio.Future[str] = loop.create_future()
        self._checker = loop.create_task(self._check_stdout())

    @classmethod
    async def start(
        cls, command: AgentCommand, cwd: str, env: Mapping[str, str] | None = None
    ) -> AgentProcess:
        environment = {**os.environ, **command.env, **(env or {})}
        try:
            process = await spawn(
                *command.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=environment,
                limit=STREAM_LIMIT,
                preexec_fn=forked_here(reset_signals),
                start_new_session=True,
            )
        except OSError as exc:
            raise AgentStartError(
                f"cannot start {command.argv[0]!r}: {exc.strerror or exc}"
            ) from None
        return cls(process)

    @property
    def stdin(self) -> asyncio.StreamWriter:
        assert self.process.stdin is not None
        return self.process.stdin

    async def _check_stdout(self) -> None:
        """Pass protocol lines on; the first line that is no JSON-RPC message is kept in
        `malformed` (the SDK would only log it and go on waiting)."""
        assert self.process.stdout is not None
        await pass_messages(self.process.stdout, self.messages, self.malformed)

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def _read_stderr(self) -> None:
        stream = self.process.stderr
        if stream is None:
            return
        with contextlib.suppress(ValueError, ConnectionError):
            while line := await stream.readline():
                self._tail.append(line.decode(errors="replace").rstrip("\n"))

    async def stderr_tail(self, settle: float = 0.5) -> str:
        """The last lines the agent wrote to stderr (waiting a moment for the rest)."""
        with contextlib.suppress(TimeoutError):
            await within(asyncio.shield(self._stderr_done), settle)
        return "\n".join(self._tail)

    def stderr_now(self) -> str:
        return "\n".join(self._tail)

    async def wait(self) -> int:
        return await self.process.wait()

    async def stop(self, grace: float = 3.0) -> None:
        """Close stdin and let the agent end; terminate, then kill, what stays."""
        try:
            if self.process.stdin is not None and not self.process.stdin.is_closing():
                self.process.stdin.close()
            for signal_it in (None, self._terminate, self._kill):
                if signal_it is not None:
                    signal_it()
                try:
                    await within(self.process.wait(), grace)
                    break
                except TimeoutError:
                    continue
            with contextlib.suppress(TimeoutError):
                await within(asyncio.shield(self._stderr_done), 1.0)
        finally:
            self.kill_now()

    def kill_now(self) -> None:
        """End the agent's process group at once and release its pipes (no waiting)."""
        if self.process.returncode is None:
            self._kill()
        self._stderr_done.cancel()
        self._checker.cancel()
        # Not transport.close(): it polls, and may reap the agent behind asyncio's child
        # watcher (which then logs "Unknown child process" and reports 255).
        release_pipes(self.process)

    def end_group(self) -> None:
        """Kill the agent and every process it started (its group); pipes stay readable."""
        self._kill()

    def _terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 15)

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 9)


async def pass_messages(
    stream: asyncio.StreamReader, messages: asyncio.StreamReader, malformed: asyncio.Future[str]
) -> None:
    """Feed `stream`'s JSON-RPC lines to `messages` until it ends; the first line that is
    no message (or a read that fails) is said once in `malformed`."""
    loop = asyncio.get_running_loop()
    since = loop.time()
    try:
        while line := await stream.readline():
            if loop.time() - since > FEED_SLICE_S:
                # A burst already read (thousands of updates) would be handed on in one go
                # and handled without a pause: let the window paint between.
                await asyncio.sleep(0)
                since = loop.time()
            why = _not_a_message(line) if line.strip() else None
            if why is not None:
                if not malformed.done():
                    shown = line.decode(errors="replace").strip()[:200]
                    malformed.set_result(f"the agent sent a malformed message{why}: {shown!r}")
                continue
            messages.feed_data(line)
    except (ValueError, ConnectionError) as exc:  # a line over the limit, a broken pipe
        if not malformed.done():
            malformed.set_result(f"the agent's output could not be read: {exc}")
    finally:
        messages.feed_eof()


def _not_a_message(line: bytes) -> str | None:
    """None for a JSON-RPC 2.0 message (a JSON object that says so), else a reason to add
    (empty when the line is simply no such message).

    The SDK decodes each line again and recurses once per level: JSON nested past the cap
    is refused here, so no later walk over it recurses either.
    """
    try:
        message = bounded_json.loads(line)
    except bounded_json.JSONTooDeep as exc:
        return f" ({exc})"
    except ValueError:
        return ""
    return None if isinstance(message, dict) and message.get("jsonrpc") == "2.0" else ""
