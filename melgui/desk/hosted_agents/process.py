"""The agent's child process: started with melgui's signal reset, its stderr kept as a tail.

Stdout and stdin carry the protocol (each line checked to be one JSON-RPC message, nested
no deeper than the decoder's cap); stderr is read all along (so a chatty agent never
blocks on a full pipe) and its last lines are what a failed pane shows.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from acp.task import MessageSender, TaskSupervisor

from melgui.core.protocol import bounded_json
from melgui.core.protocol.views.agent_commands import AgentCommand
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import forked_here, release_pipes, reset_signals, spawn

STREAM_LIMIT = 64 * 1024 * 1024  # one protocol line may carry a whole file
TAIL_LINES = 40
FEED_SLICE_S = 0.004  # at most this long handing on protocol lines before a pause
MESSAGES_PER_PAUSE = 16  # messages the SDK takes before the loop gets a turn
MERGE_CHARS = 8 * 1024  # a run of waiting text chunks is taken as one up to this size


class AgentMessages:
    """The agent's JSON-RPC messages for the SDK, through the message-level transport its
    `connect_to_agent` takes (one object with `send`, `receive`, `close`).

    Lines come in decoded once (`put`, by `pass_messages`, which has checked them), not
    framed and decoded again by the SDK. Text chunks that wait here together (a burst the
    SDK has not taken yet) are taken as one: consecutive `agent_message_chunk` (or
    `agent_thought_chunk`) updates of one session whose content is plain text and that
    carry nothing else, up to MERGE_CHARS, become one update with their texts in order.
    The SDK otherwise validates, traces and runs a task for each, and the chat changes
    once per chunk: 20,000 chunks took the ACP pane 2.4-2.8x the worker pane's time
    (bench/bench_acp_pane.py), whose transports do the same (one read's deltas, one
    delta). Every other message passes alone and in its place.

    While messages wait, the SDK takes them without letting the loop go, starting a task
    for each: it pauses every MESSAGES_PER_PAUSE (a burst of thousands of tasks alive at
    once set off full garbage collections of 100-270 ms).
    """

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self._writer = writer
        self._waiting: deque[_Waiting] = deque()
        self._arrived = asyncio.Event()
        self._ended = False
        self._taken = 0
        self._tasks = TaskSupervisor(source="melgui.AgentMessages")
        self._sender: MessageSender | None = None

    def put(self, message: dict[str, Any]) -> None:
        """A message from the agent, in its order (a text chunk may join the last)."""
        chunk = _text_chunk(message)
        last = self._waiting[-1] if self._waiting else None
        if (
            chunk is not None
            and last is not None
            and last.key == chunk[0]
            and last.chars < MERGE_CHARS
        ):
            last.texts.append(chunk[1])
            last.chars += len(chunk[1])
            return
        waiting = _Waiting(message)
        if chunk is not None:
            waiting.key, waiting.texts, waiting.chars = chunk[0], [chunk[1]], len(chunk[1])
        self._waiting.append(waiting)
        self._arrived.set()

    def end(self) -> None:
        """The agent's output ended: `receive` returns None once the rest is taken."""
        self._ended = True
        self._arrived.set()

    async def receive(self) -> dict[str, Any] | None:
        self._taken += 1
        if self._taken % MESSAGES_PER_PAUSE == 0:
            await asyncio.sleep(0)
        while not self._waiting:
            if self._ended:
                return None
            self._arrived.clear()
            await self._arrived.wait()
        return self._waiting.popleft().message_now()

    async def send(self, message: dict[str, Any]) -> None:
        if self._sender is None:  # the SDK's own: the same bytes, one write at a time
            self._sender = MessageSender(self._writer, self._tasks)
        await self._sender.send(message)

    async def close(self) -> None:
        if self._sender is not None:
            await self._sender.close()
        await self._tasks.shutdown()


@dataclass(slots=True)
class _Waiting:
    message: dict[str, Any]
    key: tuple[Any, ...] = ()  # a text chunk's session, kind and message id
    texts: list[str] = field(default_factory=list)
    chars: int = 0

    def message_now(self) -> dict[str, Any]:
        if len(self.texts) > 1:
            self.message["params"]["update"]["content"]["text"] = "".join(self.texts)
        return self.message


def _text_chunk(message: dict[str, Any]) -> tuple[tuple[Any, ...], str] | None:
    """A plain text chunk's (session, kind, message id) and text; None for any other
    message (extra fields, annotations, _meta, another content type)."""
    if message.get("method") != "session/update" or message.keys() != _NOTIFICATION:
        return None
    params = message["params"]
    if not isinstance(params, dict) or params.keys() != _PARAMS:
        return None
    update = params["update"]
    if not isinstance(update, dict) or not _CHUNK <= update.keys() <= _CHUNK_ANY:
        return None
    content = update["content"]
    if not isinstance(content, dict) or content.keys() != _TEXT or content["type"] != "text":
        return None
    session, kind, text = params["sessionId"], update["sessionUpdate"], content["text"]
    if kind not in _MERGED or not isinstance(session, str) or not isinstance(text, str):
        return None
    message_id = update.get("messageId")
    if message_id is not None and not isinstance(message_id, str):
        return None
    return (session, kind, message_id), text


_NOTIFICATION = {"jsonrpc", "method", "params"}
_PARAMS = {"sessionId", "update"}
_CHUNK = {"sessionUpdate", "content"}
_CHUNK_ANY = {"sessionUpdate", "content", "messageId"}
_TEXT = {"type", "text"}
_MERGED = ("agent_message_chunk", "agent_thought_chunk")


class AgentStartError(Exception):
    """The agent's program could not be started; the message says why."""


class AgentProcess:
    """One running agent program."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        self._tail: deque[str] = deque(maxlen=TAIL_LINES)
        loop = asyncio.get_running_loop()
        self._stderr_done = loop.create_task(self._read_stderr())
        # What the SDK reads and writes: the agent's stdout, each line once checked to be
        # a JSON-RPC message, and its stdin.
        assert process.stdin is not None
        self.messages = AgentMessages(process.stdin)
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
    stream: asyncio.StreamReader, messages: AgentMessages, malformed: asyncio.Future[str]
) -> None:
    """Put `stream`'s JSON-RPC messages in `messages` until it ends; the first line that
    is no message (or a read that fails) is said once in `malformed`."""
    loop = asyncio.get_running_loop()
    since = loop.time()
    try:
        while line := await stream.readline():
            if loop.time() - since > FEED_SLICE_S:
                # A burst already read (thousands of updates) would be handed on in one go
                # and handled without a pause: let the window paint between.
                await asyncio.sleep(0)
                since = loop.time()
            if not line.strip():
                continue
            message = _message(line)
            if isinstance(message, str):
                if not malformed.done():
                    shown = line.decode(errors="replace").strip()[:200]
                    malformed.set_result(f"the agent sent a malformed message{message}: {shown!r}")
                continue
            messages.put(message)
    except (ValueError, ConnectionError) as exc:  # a line over the limit, a broken pipe
        if not malformed.done():
            malformed.set_result(f"the agent's output could not be read: {exc}")
    finally:
        messages.end()


def _message(line: bytes) -> dict[str, Any] | str:
    """A JSON-RPC 2.0 message (a JSON object that says so), else a reason to add (empty
    when the line is simply no such message).

    JSON nested past the decoder's cap is refused (the SDK's handlers walk what they get
    recursively). A message is as `json.loads` makes it, as the SDK would decode it: a
    lone surrogate in it stays one.
    """
    try:
        message = bounded_json.loads(line)
    except bounded_json.JSONTooDeep as exc:
        return f" ({exc})"
    except ValueError:
        return ""
    if not (isinstance(message, dict) and message.get("jsonrpc") == "2.0"):
        return ""
    if b"\\u" in line and _SURROGATE.search(line) is not None:
        return dict(json.loads(line))  # bounded_json made its lone surrogates U+FFFD
    return message


_SURROGATE = re.compile(rb"\\u[dD][89a-fA-F]")
