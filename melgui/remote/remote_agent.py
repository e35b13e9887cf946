"""A remote folder's ACP agent: its program runs on the remote host, in the folder there,
and its pane, permissions and conversation stay here.

    there = AgentThere(link_of_folder, "/srv/p")
    host.run_there("/srv/p", there.spawn, there.files(source), there.terminals(...))

- **The program** is a kept terminal of the host on plain pipes (`term/open` with `argv`
  and `pipes`): its stdout comes over the link numbered by byte, as a terminal's output
  does, and is read here through a RemotePty's pipe, checked line by line as a local
  agent's stdout is (RemoteAgentProcess). Its stdin goes as `term/input`. Across a drop
  it runs on there; the reattach resumes its output from the offset this side has, and
  what the SDK wrote while the link was down is sent once it is back. Its stderr's last
  lines come with its end (`term/exit`'s `stderr`), for the pane's failure.
- **Its file requests** (`fs/read_text_file`, `fs/write_text_file`) are the host's
  `fs/read` and `fs/write`, confined to the folder there as a local agent's are to its
  folder. A write is checkpointed there, as a local agent's is here: `fs/write` carries
  `checkpoint` (`{call, summary, source}`, when `checkpoint` gives a summary: the
  desk's `checkpoint_there`, which follows the `checkpoints` setting), and the host
  writes inside its Checkpointer's guard of the folder there.
- **Its terminals** (`terminal/create`) are terminals there (`term/open` in a pty), read
  here as a remote terminal pane is, melgui's deny rules checked here first. They are
  not sandboxed (a remote folder's commands use its host's setting, not this machine's).
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import posixpath
import uuid
from collections.abc import Awaitable, Callable, Mapping
from typing import Any

from acp import RequestError
from acp.schema import EnvVariable

from melgui.core.protocol.tooling import CheckpointThere
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.desk.hosted_agents.files import AgentFiles
from melgui.desk.hosted_agents.process import (
    STREAM_LIMIT,
    AgentMessages,
    AgentProcess,
    AgentStartError,
    pass_messages,
)
from melgui.desk.hosted_agents.terminals import (
    AgentTerminal,
    AgentTerminals,
    Refusal,
)
from melgui.remote.link import Link, LinkError
from melgui.remote.remote_pty import RemotePty

EXIT_POLL_S = 0.05


class AgentThere:
    """Where a remote folder's agents run: the folder's link (awaited: it may still be
    connecting) and the folder's path there."""

    def __init__(
        self,
        link: Callable[[], Awaitable[Link]],
        folder: str,
        checkpoint: CheckpointThere | None = None,
    ) -> None:
        """`checkpoint`: a write's summary when it takes a checkpoint there, else None."""
        self.link = link
        self.folder = folder
        self.checkpoint = checkpoint

    async def spawn(self, command: AgentCommand, cwd: str, env: Mapping[str, str]) -> AgentProcess:
        try:
            link = await self.link()
            pty = await link.open_terminal(
                cwd, None, 80, 24, {**command.env, **env}, argv=list(command.argv), pipes=True
            )
        except LinkError as exc:
            raise AgentStartError(f"cannot start {command.argv[0]!r} there: {exc}") from None
        return RemoteAgentProcess(pty)

    def files(self, source: str) -> RemoteAgentFiles:
        return RemoteAgentFiles(self, source)

    def terminals(
        self, on_open: Callable[[AgentTerminal], None] | None, refusal: Refusal | None
    ) -> RemoteAgentTerminals:
        return RemoteAgentTerminals(self, on_open, refusal)


class _LinkWriter(asyncio.StreamWriter):
    """The agent's stdin as the SDK writes it (write, drain): sent as `term/input`, kept
    while the link is down and sent once it is back (RemotePty.write). A StreamWriter
    (the SDK asks for one) with no transport of its own."""

    def __init__(self, pty: RemotePty) -> None:  # nothing of super's: no transport
        self.pty = pty

    def __del__(self) -> None:
        return None

    def write(self, data: bytes | bytearray | memoryview) -> None:
        self.pty.write(bytes(data))

    async def drain(self) -> None:
        return None

    def is_closing(self) -> bool:
        return self.pty.closed

    def close(self) -> None:
        return None

    async def wait_closed(self) -> None:
        return None


class RemoteAgentProcess(AgentProcess):
    """An agent program running there, with the surface of a local AgentProcess."""

    def __init__(self, pty: RemotePty) -> None:  # no local process: nothing of super's
        self.pty = pty
        loop = asyncio.get_running_loop()
        self._writer = _LinkWriter(pty)
        self.messages = AgentMessages(self._writer)
        self.malformed = loop.create_future()
        self._raw = asyncio.StreamReader(limit=STREAM_LIMIT)
        self._fd = pty.read_fd
        if self._fd is not None:
            loop.add_reader(self._fd, self._readable)
        self._checker = loop.create_task(self._check())

    @property
    def stdin(self) -> asyncio.StreamWriter:
        return self._writer

    def _readable(self) -> None:
        while data := self.pty.read():
            self._raw.feed_data(data)
        if self.pty.eof or self.pty.closed:
            self._stop_reading()
            self._raw.feed_eof()

    def _stop_reading(self) -> None:
        if self._fd is not None:
            with contextlib.suppress(ValueError, OSError, RuntimeError):
                asyncio.get_running_loop().remove_reader(self._fd)
            self._fd = None

    async def _check(self) -> None:
        """As AgentProcess._check_stdout: protocol lines on, the first other one kept."""
        await pass_messages(self._raw, self.messages, self.malformed)

    @property
    def returncode(self) -> int | None:
        return self.pty.poll()

    async def wait(self) -> int:
        while (code := self.pty.poll()) is None:
            await asyncio.sleep(EXIT_POLL_S)
        return code

    def stderr_now(self) -> str:
        lines = [self.pty.stderr] if self.pty.stderr else []
        if self.pty.note:
            lines.append(f"[{self.pty.note}]")
        return "\n".join(lines)

    async def stderr_tail(self, settle: float = 0.5) -> str:
        return self.stderr_now()

    async def stop(self, grace: float = 3.0) -> None:
        """Hang it up there: the host closes its stdin, then ends its session."""
        self.kill_now()

    def kill_now(self) -> None:
        if self.pty.poll() is None:
            self.pty.terminate()
        self._stop_reading()
        self._checker.cancel()
        self.pty.finish()

    def end_group(self) -> None:
        self.pty.terminate()


class RemoteAgentFiles(AgentFiles):
    """The agent's file requests, answered by the host there (`fs/read`, `fs/write`)."""

    def __init__(self, there: AgentThere, source: str) -> None:  # no workspace here
        self.there = there
        self.source = source
        self.around_write = None
        self._prefix = uuid.uuid4().hex[:8]  # its writes' ids, unique in the host's log
        self._ids = itertools.count(1)

    def read(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        raise RequestError.internal_error({"path": path, "reason": "the file is there"})

    async def aread(self, path: str, line: int | None = None, limit: int | None = None) -> str:
        answer = await self._ask("fs/read", path, line=line, limit=limit)
        return str(answer.get("content", ""))

    async def write(self, path: str, content: str) -> None:
        arguments = {"path": self._shown(path), "content": content}
        checkpoint = self.there.checkpoint
        summary = checkpoint("write_file", arguments) if checkpoint is not None else None
        if summary is None:
            await self._ask("fs/write", path, content=content)
            return
        call = f"acp-write-{self._prefix}-{next(self._ids)}"
        mark = {"call": call, "summary": summary, "source": self.source}
        await self._ask("fs/write", path, content=content, checkpoint=mark)

    def _shown(self, path: str) -> str:
        """The path as a local agent's write summary has it: inside the folder, relative."""
        root = self.there.folder.rstrip("/") + "/"
        return path[len(root) :] if path.startswith(root) else path

    async def _ask(self, method: str, path: str, **params: Any) -> dict[str, Any]:
        try:
            link = await self.there.link()
            return await link.about_folder(method, self.there.folder, path=path, **params)
        except LinkError as exc:
            raise RequestError.invalid_params({"path": path, "reason": str(exc)}) from None


class RemoteAgentTerminals(AgentTerminals):
    """The agent's terminals, run there in ptys; melgui's deny rules checked here."""

    def __init__(
        self,
        there: AgentThere,
        on_open: Callable[[AgentTerminal], None] | None,
        refusal: Refusal | None,
    ) -> None:  # no workspace nor sandbox here
        self.there = there
        self.on_open = on_open
        self.refusal = refusal
        self.sandbox = None
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
        raise RequestError.internal_error({"command": command, "reason": "it runs there"})

    async def open(
        self,
        command: str,
        args: list[str] | None,
        env: list[EnvVariable] | None,
        cwd: str | None,
        limit: int | None,
    ) -> AgentTerminal:
        argv = [command, *(args or [])]
        line = self.checked(argv)
        root = self.there.folder
        folder = posixpath.normpath(posixpath.join(root, cwd)) if cwd else root
        if folder != root and not folder.startswith(root.rstrip("/") + "/"):
            raise RequestError.invalid_params({"cwd": cwd, "reason": "outside the folder"})
        variables = {v.name: v.value for v in env or []}
        try:
            link = await self.there.link()
            pty = await link.open_terminal(folder, None, 120, 30, variables, argv=argv)
        except LinkError as exc:
            raise RequestError.invalid_params({"command": line, "reason": str(exc)}) from None
        return self.opened(line, pty, limit)
