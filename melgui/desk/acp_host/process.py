"""The agent's child process: started with melgui's signal reset, its stderr kept as a tail.

Stdout and stdin carry the protocol; stderr is read all along (so a chatty agent never
blocks on a full pipe) and its last lines are what a failed pane shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections import deque
from collections.abc import Mapping

from melgui.core.processes import reset_signals
from melgui.desk.acp_host.agents import AgentCommand

STREAM_LIMIT = 64 * 1024 * 1024  # one protocol line may carry a whole file
TAIL_LINES = 40


class AgentStartError(Exception):
    """The agent's program could not be started; the message says why."""


class AgentProcess:
    """One running agent program."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._stderr_done = asyncio.get_running_loop().create_task(self._read_stderr())

    @classmethod
    async def start(
        cls, command: AgentCommand, cwd: str, env: Mapping[str, str] | None = None
    ) -> AgentProcess:
        environment = {**os.environ, **command.env, **(env or {})}
        try:
            process = await asyncio.create_subprocess_exec(
                *command.argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                cwd=cwd,
                env=environment,
                limit=STREAM_LIMIT,
                preexec_fn=reset_signals,
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

    @property
    def stdout(self) -> asyncio.StreamReader:
        assert self.process.stdout is not None
        return self.process.stdout

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
            await asyncio.wait_for(asyncio.shield(self._stderr_done), settle)
        return "\n".join(self._tail)

    def stderr_now(self) -> str:
        return "\n".join(self._tail)

    async def wait(self) -> int:
        return await self.process.wait()

    async def stop(self, grace: float = 3.0) -> None:
        """Close stdin and let the agent end; terminate, then kill, what stays."""
        if self.process.stdin is not None and not self.process.stdin.is_closing():
            self.process.stdin.close()
        for signal_it in (None, self._terminate, self._kill):
            if signal_it is not None:
                signal_it()
            try:
                await asyncio.wait_for(self.process.wait(), grace)
                break
            except TimeoutError:
                continue
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self._stderr_done), 1.0)
        self._stderr_done.cancel()

    def _terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 15)

    def _kill(self) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.process.pid, 9)
