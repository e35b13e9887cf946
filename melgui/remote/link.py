"""The link to a remote melgui host: a child process (ssh, or a container's exec) whose
stdio carries the host protocol, heartbeats, reconnects with backoff, reattach and
replay, and each tool call's one result.

    link = Link(parse_folder("ssh://build/srv/p"), host_argv())
    await link.open()                               # the first connection may ask a person
    outcome = await link.run_call("v1/1", "/srv/p", "read_file", {"path": "a"})
    await link.aclose()

Exactly once: a call is sent with the view's call id and the host never runs an id twice;
its result is kept there until this side acknowledges it. When the link drops, the call
goes on there; the link reconnects (BatchMode: nobody may be there to answer), reattaches
from the last result number it has and hears what it missed; a result heard twice (a lost
acknowledgement) is dropped by its call id. A call whose request may have reached a host
is never sent again to another one (a host that restarted): it gets one error result
saying it may have finished there. When the link cannot be restored, every open call gets
that one result.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from melgui.core.hooks.there import HooksSummary
from melgui.core.hooks.watch import HooksHeard
from melgui.core.runtime.deadline import within
from melgui.core.runtime.processes import kill_unreaped, spawn
from melgui.host.client import HostClient, HostGone, VersionRefused
from melgui.host.wire import MAX_LINE, RpcError, widen_pipe
from melgui.remote.askpass import Askpass, ssh_refusal
from melgui.remote.heartbeat import DEAD_AFTER, HEARTBEAT, until_dead
from melgui.remote.remote_pty import HostTerminals, RemotePty, TerminalUnavailable
from melgui.remote.target import Target

log = logging.getLogger(__name__)

BACKOFF = (0.2, 0.5, 1.0, 2.0, 4.0)  # then the last, until GIVE_UP
GIVE_UP = 60.0  # seconds of failed reconnects before open calls get their one result
CONNECT_TIMEOUT = 30.0
Outcome = dict[str, Any]


class LinkError(Exception):
    """The link could not be made; the message says why in plain words."""


@dataclass
class _Call:
    name: str
    folder: str
    arguments: dict[str, Any]
    future: asyncio.Future[Outcome]
    options: dict[str, Any] = field(default_factory=dict)  # this machine's settings
    checkpoint: dict[str, Any] | None = None  # {call, summary, source}: snapshot it there
    host: str | None = None  # the host its request may have reached
    method: str = "tools/run"  # or "hooks/run": a point's hooks there (`arguments` its params)
    label: str = ""  # what it is in words, when not the tool's name

    @property
    def said(self) -> str:
        return self.label or self.name


@dataclass
class _Connection:
    process: asyncio.subprocess.Process
    client: HostClient
    host: str = ""
    stderr: deque[str] = field(default_factory=lambda: deque(maxlen=40))


class Link:
    def __init__(
        self,
        target: Target,
        host_argv: list[str],
        *,
        heartbeat: float = HEARTBEAT,
        dead_after: float = DEAD_AFTER,
        backoff: tuple[float, ...] = BACKOFF,
        give_up: float = GIVE_UP,
        on_state: Callable[[str], None] | None = None,
        askpass: Askpass | None = None,
    ) -> None:
        self.target = target
        # ssh's questions (host key, passphrase) go to the person through it; without
        # one, the first connection's ssh asks on the terminal, if there is one.
        self.askpass = askpass
        self.host_argv = host_argv
        self.heartbeat = heartbeat
        self.dead_after = dead_after
        self.backoff = backoff
        self.give_up = give_up
        self.on_state = on_state
        # (folder, its MCP servers described): a server there changed state after they
        # started (it died, it was restarted): the host's `mcp/changed`.
        self.on_mcp: Callable[[str, list[dict[str, Any]]], None] | None = None
        self.state = "closed"
        self.reconnects = 0
        self._calls: dict[str, _Call] = {}
        self._delivered: set[str] = set()
        self._host: str | None = None  # the host this link has talked to
        self._last_seq = 0
        self._connection: _Connection | None = None
        self._connected = asyncio.Event()
        self._supervising: asyncio.Task[None] | None = None
        self._closing = False
        self._lost = ""  # why the link is gone for good
        self._last_stderr: list[str] = []  # what ssh said when a connection failed
        self._last_exit = ""
        self._acks: set[asyncio.Task[None]] = set()
        # Open terminal panes' programs there (remote_pty.py, shared with the window's
        # view of the local host).
        self.terminals = HostTerminals(target.label, lambda: self.current, lambda: self.state)
        # Heard on each connection, first or again, before calls are sent again (the
        # sessions whose loop runs there reattach: link_client.py).
        self.on_connect: list[Callable[[HostClient], Awaitable[None]]] = []
        # Heard once when the link is lost for good (why, in plain words).
        self.on_lost: list[Callable[[str], None]] = []
        self._hooks = HooksHeard()  # what folders' hooks there are (hooks/watch, …/changed)

    @property
    def pid(self) -> int | None:
        """The link process's pid (ssh's), while connected."""
        return self._connection.process.pid if self._connection else None

    def _say(self, state: str) -> None:
        self.state = state
        if self.on_state is not None:
            self.on_state(state)

    # -- opening -------------------------------------------------------------------------

    async def open(self) -> None:
        """The first connection; raises LinkError saying why it failed."""
        try:
            await self._connect(batch=False)
        except (OSError, HostGone, RpcError, VersionRefused, TimeoutError) as exc:
            raise LinkError(self._why(exc)) from None
        self._supervising = asyncio.get_running_loop().create_task(self._supervise())

    def _why(self, exc: BaseException) -> str:
        asked = self.askpass.asked if self.askpass is not None else []
        host = str(getattr(self.target, "host", self.target.label))
        refused = ssh_refusal(self.target.label, host, self._last_stderr, asked)
        if refused is not None:
            return refused
        said = "; ".join(self._last_stderr) or self._last_exit or str(exc) or type(exc).__name__
        return f"cannot reach {self.target.label}: {said}"

    async def _connect(self, *, batch: bool) -> None:
        argv = self.target.argv(self.host_argv, batch=batch)
        asking = self.askpass is not None
        process = await spawn(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            limit=MAX_LINE,
            env={**os.environ, **self.askpass.env()} if self.askpass is not None else None,
            # A reconnect never reads the person's terminal; with an askpass, no ssh does.
            start_new_session=batch or asking,
        )
        assert process.stdin is not None and process.stdout is not None
        # asyncio names no public way to the child's pipes: its transport, if it has one.
        transport = getattr(process, "_transport", None)
        for number in (0, 1):
            pipe = transport.get_pipe_transport(number) if transport else None
            raw = pipe.get_extra_info("pipe") if pipe else None
            if raw is not None:
                with contextlib.suppress(ValueError, OSError):  # closed already: it ended
                    widen_pipe(raw.fileno())
        client = HostClient(process.stdout, process.stdin)
        connection = _Connection(process, client)
        reading = asyncio.get_running_loop().create_task(self._read_stderr(connection))
        try:
            async with asyncio.timeout(CONNECT_TIMEOUT):
                await client.initialize("remote view")
                pinged = await client.call("host/ping")
                connection.host = str(pinged["host"])
                client.on_notification = lambda method, params: self._notified(
                    connection, method, params
                )
                attached = await client.call("tools/attach", since=self._since(connection.host))
                # After the attach: what a call whose result it holds wrote is in the answer.
                for folder in list(self._hooks.folders):
                    await self._ask_hooks(connection, folder)
        except BaseException:
            await _end(process)
            await asyncio.gather(reading, return_exceptions=True)
            self._last_stderr = list(connection.stderr)
            code = process.returncode
            self._last_exit = (
                f"the command ended (exit status {code}) before melgui's host answered"
                if code is not None
                else ""
            )
            await client.aclose()
            raise
        self._connection = connection
        self._adopt(connection, attached)
        await self.terminals.attach_all(client)
        for hook in list(self.on_connect):
            await hook(client)
        self._connected.set()
        self._say("connected")
        await self._resend(connection)

    @property
    def current(self) -> HostClient | None:
        """The host there's client, while connected."""
        return self._connection.client if self._connection else None

    async def client(self) -> HostClient:
        """The host there's client now, waiting while the link reconnects; HostGone
        (saying why) once it is lost for good."""
        while True:
            if self._lost:
                raise HostGone(self._lost)
            if self._connection is not None:
                return self._connection.client
            await self._connected.wait()

    def _since(self, host: str) -> int:
        return self._last_seq if host == self._host else 0

    def _adopt(self, connection: _Connection, attached: dict[str, Any]) -> None:
        """After (re)attaching: a host that is not the one the calls went to lost them;
        the results missed are delivered."""
        host = connection.host
        if self._host is not None and host != self._host:
            for call_id, call in list(self._calls.items()):
                if call.host is not None:
                    self._fail(call_id, f"the melgui host on {self.target.label} stopped "
                               f"while {call.said} ran; it may have finished there")  # fmt: skip
            self.terminals.end_all(f"the melgui host on {self.target.label} stopped; the "
                                   "program ended with it")  # fmt: skip
            self._last_seq = 0
        self._host = host
        for result in attached["results"]:
            self._deliver(connection, result)

    async def _resend(self, connection: _Connection) -> None:
        """Send the open calls again: the host runs an id it has not seen, and answers
        "running" or "done" for one it has (never running it twice)."""
        for call_id, call in list(self._calls.items()):
            if call_id not in self._delivered:
                await self._send(connection, call_id, call)

    async def _read_stderr(self, connection: _Connection) -> None:
        stream = connection.process.stderr
        assert stream is not None
        while line := await stream.readline():
            text = line.decode(errors="replace").strip()
            if text:
                connection.stderr.append(text)
                log.info("%s: %s", self.target.label, text)

    # -- calls ---------------------------------------------------------------------------

    async def run_call(
        self,
        call_id: str,
        folder: str,
        name: str,
        arguments: dict[str, Any],
        options: dict[str, Any] | None = None,
        checkpoint: dict[str, Any] | None = None,
    ) -> Outcome:
        """Run one call there and return its one result ({content, status, parts});
        `options`: settings for that machine (`sandbox`, `env`); `checkpoint` (`{call,
        summary, source}`): the host there snapshots the folder around the call."""
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        return await self._run(call_id, _Call(name, folder, arguments, future, options or {},
                                              checkpoint))  # fmt: skip

    async def run_hooks(
        self,
        call_id: str,
        folder: str,
        event: str,
        names: list[str],
        payload: dict[str, Any],
    ) -> Outcome:
        """Run the project's hooks of `folder` there for one point (`hooks/run`), as a
        call is run: once there, its one result here (`hooks`: the runs), across a drop;
        a link lost for good or a host that died is said as for a call."""
        future: asyncio.Future[Outcome] = asyncio.get_running_loop().create_future()
        params = {"event": event, "names": names, "payload": payload}
        label = f"the project's {event} hooks"
        return await self._run(call_id, _Call("hooks/run", folder, params, future,
                                              method="hooks/run", label=label))  # fmt: skip

    async def _run(self, call_id: str, call: _Call) -> Outcome:
        if self._lost:
            return _error(f"{call.said} did not run: {self._lost}")
        if call_id in self._delivered:  # the host would not run it again either
            return _error(f"{call.said} did not run again: call {call_id} has its result")
        future = call.future
        self._calls[call_id] = call
        connection = self._connection
        if connection is not None:
            await self._send(connection, call_id, call)
        try:
            return await asyncio.shield(future)
        except asyncio.CancelledError:
            await self.cancel(call_id)
            raise
        finally:
            self._calls.pop(call_id, None)

    async def _send(self, connection: _Connection, call_id: str, call: _Call) -> None:
        call.host = connection.host
        checkpoint = {"checkpoint": call.checkpoint} if call.checkpoint else {}
        if call.method == "tools/run":
            params = dict(name=call.name, arguments=call.arguments, options=call.options,
                          **checkpoint)  # fmt: skip
        else:
            params = call.arguments
        try:
            answer = await connection.client.call(
                call.method, call_id=call_id, folder=call.folder, **params
            )
        except RpcError as exc:  # refused (not a folder there): its one result, at once
            self._fail(call_id, f"{call.said} did not run: {exc.message}")
            return
        except (HostGone, ConnectionError):
            return  # sent again once the link is back
        else:
            if answer.get("state") == "acknowledged":  # delivered earlier by this link
                self._fail(call_id, f"{call.said}'s result was already delivered")

    async def cancel(self, call_id: str) -> None:
        connection = self._connection
        if connection is not None:
            with contextlib.suppress(HostGone, ConnectionError, RpcError):
                await connection.client.call("tools/cancel", call_id=call_id)

    # -- the hooks a folder there has ---------------------------------------------------

    def hooks_known(self, folder: str) -> HooksSummary | None:
        """Which hooks `folder` has there, as the host this link is connected to told it
        (kept current by its hooks/changed); None when not known now (never asked, or
        the link is down: a change there may be unheard)."""
        connection = self._connection
        return self._hooks.known(connection.host, folder) if connection is not None else None

    async def watch_hooks(self, folder: str) -> HooksSummary | None:
        """Ask which hooks `folder` has there, and hear each change from now on, across
        reconnects; None when the link cannot ask now."""
        self._hooks.folders.add(folder)
        connection = self._connection
        if connection is not None:
            await self._ask_hooks(connection, folder)
        return self.hooks_known(folder)

    async def _ask_hooks(self, connection: _Connection, folder: str) -> None:
        try:
            answer = await connection.client.call("hooks/watch", folder=folder)
        except (RpcError, HostGone, ConnectionError):
            return  # not known: its points are sent, and say why they could not run
        self._hooks.heard(connection.host, folder, answer["summary"])

    def _notified(self, connection: _Connection, method: str, params: dict[str, Any]) -> None:
        if method == "tools/result" and params.get("host") == connection.host:
            self._deliver(connection, params["result"])
        elif method == "hooks/changed" and params.get("host") == connection.host:
            self._hooks.heard(connection.host, str(params.get("folder")), params["summary"])
        elif method == "mcp/changed" and params.get("host") == connection.host:
            if self.on_mcp is not None:
                self.on_mcp(str(params.get("folder")), list(params.get("servers") or []))
        else:
            self.terminals.heard(method, params)

    async def restore_checkpoints(
        self,
        folder: str,
        calls: list[str],
        choices: dict[str, str] | None = None,
        *,
        plan_only: bool = False,
    ) -> dict[str, Any]:
        """Ask the host there to put back what these calls (the model's ids) changed in
        `folder`, from its checkpoints: `{restored, files, conflicts, skipped}` (with
        `plan_only`, what it would put back). Raises LinkError saying why it could not."""
        return await self.about_folder(
            "checkpoint/restore", folder, calls=calls, choices=choices or {}, plan_only=plan_only
        )

    async def about_folder(self, method: str, folder: str, **params: Any) -> dict[str, Any]:
        """A host method about `folder` (`checkpoint/…`, `changes/uncommitted`:
        docs/host-protocol.md), answered now or a LinkError saying why not: it is not
        sent again on a reconnect."""
        connection = self._connection
        if connection is None:
            raise LinkError(f"not connected to {self.target.label} now: {self.state}")
        try:
            answer: dict[str, Any] = await connection.client.call(method, folder=folder, **params)
        except RpcError as exc:
            raise LinkError(f"{self.target.label}: {exc.message}") from None
        except (HostGone, ConnectionError):
            raise LinkError(f"the connection to {self.target.label} dropped") from None
        return answer

    # -- terminals -----------------------------------------------------------------------

    async def open_terminal(
        self,
        folder: str,
        command: str | None,
        columns: int,
        rows: int,
        env: dict[str, str] | None = None,
        *,
        argv: list[str] | None = None,
        pipes: bool = False,
    ) -> RemotePty:
        """A program in a pty on the remote (the login shell there when `command` is None;
        `argv`: exactly that program, no shell), read here through a RemotePty; with
        `pipes`, on plain pipes there (an ACP agent's stdio: its bytes as they are, its
        stderr kept apart and told at its end). Raises LinkError saying why it could not
        start."""
        try:
            return await self.terminals.open(
                folder, command, columns, rows, env, argv=argv, pipes=pipes
            )
        except TerminalUnavailable as exc:
            raise LinkError(str(exc)) from None

    def _deliver(self, connection: _Connection, result: dict[str, Any]) -> None:
        call_id = str(result["call_id"])
        self._last_seq = max(self._last_seq, int(result["seq"]))
        if call_id not in self._delivered:
            self._delivered.add(call_id)
            call = self._calls.get(call_id)
            if call is not None and not call.future.done():
                call.future.set_result(result["outcome"])
        # Acknowledged each time it is heard (heard again: the first ack was lost).
        acking = asyncio.get_running_loop().create_task(self._ack(connection, call_id))
        self._acks.add(acking)
        acking.add_done_callback(self._acks.discard)

    async def _ack(self, connection: _Connection, call_id: str) -> None:
        with contextlib.suppress(HostGone, ConnectionError, RpcError):
            await connection.client.call("tools/ack", calls=[call_id])

    def _fail(self, call_id: str, message: str) -> None:
        self._delivered.add(call_id)
        call = self._calls.get(call_id)
        if call is not None and not call.future.done():
            call.future.set_result(_error(message))

    # -- keeping it up -------------------------------------------------------------------

    async def _supervise(self) -> None:
        while True:
            connection = self._connection
            assert connection is not None
            why = await until_dead(connection.client, self.heartbeat, self.dead_after)
            log.info("%s: the link is dead: %s", self.target.label, why)
            self._connection = None
            self._connected.clear()
            await _end(connection.process)
            await connection.client.aclose()
            if self._closing or not await self._reconnect():
                return

    async def _reconnect(self) -> bool:
        loop = asyncio.get_running_loop()
        started = loop.time()
        attempt = 0
        while True:
            self._say(f"reconnecting to {self.target.label} (attempt {attempt + 1})")
            try:
                await self._connect(batch=True)
                self.reconnects += 1
                return True
            except (OSError, HostGone, RpcError, VersionRefused, TimeoutError) as exc:
                log.info("%s: reconnect failed: %s", self.target.label, self._why(exc))
            delay = self.backoff[min(attempt, len(self.backoff) - 1)]
            attempt += 1
            if loop.time() - started + delay > self.give_up:
                self._lose(f"the connection to {self.target.label} was lost")
                return False
            await asyncio.sleep(delay)

    def _lose(self, why: str, *, say: bool = True) -> None:
        self._lost = why
        self._connected.set()  # who waits for a connection hears it is lost
        if say:
            self._say("lost")
            for hook in list(self.on_lost):
                hook(why)
        self.terminals.end_all(f"{why}; the program may still run there")
        for call_id, call in list(self._calls.items()):
            if call.host is None:
                self._fail(call_id, f"{call.said} did not run: {why}")
            else:
                self._fail(call_id, f"{why} while {call.said} ran; it may have finished there")

    async def aclose(self) -> None:
        self._closing = True  # no reconnect from here, even if a cancel were lost
        if self._supervising is not None:
            self._supervising.cancel()
            try:
                await self._supervising
            except asyncio.CancelledError:
                pass
            except Exception:  # its fault is logged; the link and its process still close
                log.exception("%s: the link's supervisor failed", self.target.label)
        connection, self._connection = self._connection, None
        if connection is not None:
            await connection.client.aclose()
            await _end(connection.process)
        self._lose("the link was closed", say=False)
        if self.askpass is not None:
            await self.askpass.aclose()


def _error(message: str) -> Outcome:
    return {"content": message, "status": "error", "parts": []}


async def _end(process: asyncio.subprocess.Process) -> None:
    """Close the process's stdin (the remote bridge ends with it), then make sure it ends."""
    if process.stdin is not None:
        with contextlib.suppress(Exception):
            process.stdin.close()
    try:
        await within(process.wait(), 2.0)
    except TimeoutError:
        kill_unreaped(process)  # not process.kill(): its poll may reap behind the watcher
        await process.wait()
