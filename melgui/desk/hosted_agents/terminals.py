"""`terminal/*` requests in melgui's pseudo-terminals.

Each terminal is a PtySession in the project folder (a `cwd` outside it is refused).
A command melgui's rules deny (`refusal`) is refused to the agent with the rule's reason;
when commands are sandboxed (`sandbox`, the desk's setting) it runs in bubblewrap, as
run_command does. Output is read as it comes and kept up to the agent's byte limit, at most
MAX_OUTPUT_LIMIT (the oldest bytes go first, as the protocol asks). `on_open` lets a
window show the terminal.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import shlex
from collections.abc import Callable
from typing import Protocol

from acp import RequestError
from acp.schema import EnvVariable, TerminalExitStatus

from melgui.core.protocol.tooling import ToolError
from melgui.core.protocol.views.relayed_copies import ending_words
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import without_secrets
from melgui.core.terminal.pty_session import PtyError, PtySession
from melgui.tools.commands.sandbox import SandboxSpec, bwrap_argv, sandbox_env
from melgui.tools.workspace import Workspace


class TerminalPty(Protocol):
    """What an agent's terminal reads and ends: a PtySession here, or a RemotePty for a
    remote folder's agent (melgui/remote/remote_agent.py)."""

    columns: int
    rows: int

    @property
    def eof(self) -> bool: ...

    @property
    def exit_code(self) -> int | None: ...

    def read(self, limit: int = 65536) -> bytes: ...

    def write(self, data: bytes) -> None: ...

    def poll(self) -> int | None: ...

    def session_pids(self) -> list[int]: ...

    def settle(self, timeout: float = 0.0) -> None: ...

    def kill(self) -> None: ...

    def finish(self) -> int | None: ...


DEFAULT_LIMIT = 1024 * 1024
MAX_OUTPUT_LIMIT = 16 * 1024 * 1024  # kept per terminal, whatever limit the agent asks for
POLL_S = 0.05
EOF_GRACE_S = 2.0  # a terminal a program outside its session still holds: exit told then
Refusal = Callable[[str], str | None]  # a command line -> why the rules deny it, or None
# The sandbox commands run in, None when they are not sandboxed; raises ToolError when
# the setting is on but the sandbox cannot be used.
SandboxFor = Callable[[], SandboxSpec | None]


class AgentTerminal:
    """One command an agent runs, its output so far and how it ended."""

    def __init__(self, terminal_id: str, title: str, pty: TerminalPty, limit: int) -> None:
        self.id = terminal_id
        self.title = title
        self.pty = pty
        self.limit = max(limit, 0)
        self.output = bytearray()
        self.truncated = False
        self.exited = asyncio.Event()
        self.listeners: list[Callable[[bytes], None]] = []
        self.on_exit: list[Callable[[], None]] = []  # told once the program has ended
        self._watch = asyncio.get_running_loop().create_task(self._pump())

    @property
    def columns(self) -> int:
        return self.pty.columns

    @property
    def rows(self) -> int:
        return self.pty.rows

    def write(self, data: bytes) -> None:
        """Keys typed in its tab, to the program."""
        self.pty.write(data)

    async def _pump(self) -> None:
        loop = asyncio.get_running_loop()
        ended: float | None = None  # when the program and its session had ended
        while True:
            data = self.pty.read()
            if data:
                self._keep(data)
                continue
            if self.pty.eof and self.pty.poll() is not None:
                break
            if self.pty.poll() is not None and not self.pty.session_pids():
                # What they wrote comes through to the end of file (the terminal's last
                # holder closed it), however slow the machine; only a program that left
                # the session and keeps the terminal open is waited for no longer than
                # EOF_GRACE_S.
                ended = loop.time() if ended is None else ended
                if loop.time() - ended >= EOF_GRACE_S:
                    await asyncio.to_thread(self.pty.settle)  # waits up to 50 ms
                    data = self.pty.read()  # what was left in the buffer
                    if data:
                        self._keep(data)
                        continue
                    break
            await asyncio.sleep(POLL_S)
        self.exited.set()
        for listener in list(self.on_exit):
            listener()

    def _keep(self, data: bytes) -> None:
        self.output += data
        if len(self.output) > self.limit:
            cut = len(self.output) - self.limit
            # never cut a UTF-8 character in half
            while cut < len(self.output) and (self.output[cut] & 0xC0) == 0x80:
                cut += 1
            del self.output[:cut]
            self.truncated = True
        for listener in list(self.listeners):
            listener(data)

    def text(self) -> str:
        return self.output.decode("utf-8", errors="replace").replace("\r\n", "\n")

    def exit_status(self) -> TerminalExitStatus | None:
        if not self.exited.is_set():
            return None
        code = self.pty.exit_code
        if code is not None and code < 0:
            import signal

            return TerminalExitStatus(exit_code=None, signal=signal.Signals(-code).name)
        return TerminalExitStatus(exit_code=code, signal=None)

    def ending(self) -> str:
        """How it ended, for its tab ("" while it runs)."""
        status = self.exit_status()
        return "" if status is None else ending_words(status.exit_code, status.signal)

    def kill(self) -> None:
        if self.pty.poll() is None or self.pty.session_pids():
            self.pty.kill()

    async def release(self) -> None:
        self.kill()
        with contextlib.suppress(TimeoutError):
            await within(self.exited.wait(), 5)
        self._watch.cancel()
        self.pty.finish()


class AgentTerminals:
    """The terminals of one agent; all of them end with the agent's pane."""

    def __init__(
        self,
        workspace: Workspace,
        on_open: Callable[[AgentTerminal], None] | None = None,
        *,
        refusal: Refusal | None = None,
        sandbox: SandboxFor | None = None,
    ) -> None:
        self.workspace = workspace
        self.on_open = on_open
        self.refusal = refusal
        self.sandbox = sandbox
        self._terminals: dict[str, AgentTerminal] = {}
        self._ids = itertools.count(1)

    def create(
        self,
        command: str,
        args: list[str] | None,
        env: list[EnvVariable] | None,
        cwd: str | None,
        limit: int | None,
    ) -> AgentTerminal:
        try:
            folder = self.workspace.existing_dir(cwd) if cwd else self.workspace.root
        except ToolError as exc:
            raise RequestError.invalid_params({"cwd": cwd, "reason": str(exc)}) from None
        # The agent's own variables, over melgui's without its keys (as run_command's).
        environment = {**without_secrets(os.environ), **{v.name: v.value for v in env or []}}
        argv = [command, *(args or [])]
        line = self.checked(argv)
        try:
            spec = self.sandbox() if self.sandbox is not None else None
        except ToolError as exc:
            raise RequestError.invalid_params({"command": line, "reason": str(exc)}) from None
        run = argv
        if spec is not None:
            run = bwrap_argv(spec, str(folder), argv)
            environment = sandbox_env(environment)
        try:
            pty = PtySession(run, cwd=folder, env=environment, columns=120, rows=30)
        except PtyError as exc:
            raise RequestError.invalid_params({"command": command, "reason": str(exc)}) from None
        title = " ".join(argv) + (" (sandboxed)" if spec is not None else "")
        return self.opened(title, pty, limit)

    def checked(self, argv: list[str]) -> str:
        """The command line, once melgui's deny rules let it run (else refused)."""
        line = shlex.join(argv)
        why = self.refusal(line) if self.refusal is not None else None
        if why:
            raise RequestError.invalid_params({"command": line, "reason": why})
        return line

    def opened(self, title: str, pty: TerminalPty, limit: int | None) -> AgentTerminal:
        """A terminal started: numbered, kept, and shown to whoever watches."""
        terminal_id = f"term-{next(self._ids)}"
        kept = DEFAULT_LIMIT if limit is None else min(limit, MAX_OUTPUT_LIMIT)
        terminal = AgentTerminal(terminal_id, title, pty, kept)
        self._terminals[terminal_id] = terminal
        if self.on_open is not None:
            self.on_open(terminal)
        return terminal

    async def open(
        self,
        command: str,
        args: list[str] | None,
        env: list[EnvVariable] | None,
        cwd: str | None,
        limit: int | None,
    ) -> AgentTerminal:
        """`create` as the client awaits it (a remote folder's agent runs them there)."""
        return self.create(command, args, env, cwd, limit)

    def get(self, terminal_id: str) -> AgentTerminal:
        terminal = self._terminals.get(terminal_id)
        if terminal is None:
            raise RequestError.invalid_params({"terminalId": terminal_id, "reason": "no such"})
        return terminal

    async def release(self, terminal_id: str) -> None:
        terminal = self._terminals.pop(terminal_id, None)
        if terminal is not None:
            await terminal.release()

    async def close(self) -> None:
        for terminal_id in list(self._terminals):
            await self.release(terminal_id)
