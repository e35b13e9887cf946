"""A view's end of the host protocol (asyncio, Qt-free): connect or start the user's
host, initialize, call, and hear numbered changes with their numbers checked.

    client = await HostClient.attach_or_start(client="window")
    session = await client.call("session/open", folder="/p")
    await client.attach({session["id"]: None})          # a snapshot, then changes
    client.on_changes = lambda sid, changes: ...
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, Protocol, Self

from melgui.host import wire
from melgui.host.changes import Record
from melgui.host.place import HostPlace
from melgui.host.wire import RpcError

START_TIMEOUT = 20.0
# A view reads the lines it has, back to back, for this long at most (seconds) before it
# lets its loop run (the window draws, its timers tick): a burst that came while the window
# was busy (a frame's batches of 8 sessions, a reattach's missed changes) is handled over
# several turns, not in one stall.
READ_TURN = 0.004
READ_WAITED = 0.0005  # a read that took this long waited: the loop ran meanwhile
HOST_GONE = (
    "The melgui host stopped unexpectedly: its connection closed. Agents it ran were "
    "cut off; a new host reopens the conversations from the journal."
)


class VersionRefused(Exception):
    """The host is another melgui version (the message names both). `gives_way`: it ran
    nothing and is ending, so that a host of this version can start."""

    def __init__(self, message: str, *, gives_way: bool = False) -> None:
        super().__init__(message)
        self.gives_way = gives_way


class HostGone(Exception):
    """The connection to the host closed; the message says so in plain words."""


class SessionClient(Protocol):
    """The host as a RemoteSession talks to it: a HostClient, or a remote link's
    LinkClient (remote/link_client.py), which reattaches by itself after a drop."""

    sessions: dict[str, Callable[[list[Record]], None]]
    resets: dict[str, Callable[[dict[str, Any]], None]]
    lost: dict[str, Callable[[str], None]]

    async def call(self, method: str, **params: Any) -> Any: ...

    async def attach(
        self, sessions: dict[str, int | None], page: int | None = None
    ) -> dict[str, Any]: ...


class HostClient:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._next = 0
        self._waiting: dict[int, asyncio.Future[Any]] = {}
        self.on_changes: Callable[[str, list[Record]], None] | None = None
        # Per-session listeners (a RemoteSession each), heard after on_changes.
        self.sessions: dict[str, Callable[[list[Record]], None]] = {}
        # Per-session snapshot takers, for a client that reattaches by itself (a remote
        # link's: remote/link_client.py) and may be given a snapshot instead of changes.
        self.resets: dict[str, Callable[[dict[str, Any]], None]] = {}
        # Per-session "cannot be reached any more, and why", for such a client too.
        self.lost: dict[str, Callable[[str], None]] = {}
        self.on_gone: Callable[[str], None] | None = None
        # Other notifications (method, params): a remote view's `tools/result`.
        self.on_notification: Callable[[str, dict[str, Any]], None] | None = None
        self.last_seq: dict[str, int] = {}
        self.gaps: list[str] = []  # numbering faults seen (none, if the host is right)
        self.gone: str = ""
        self.info: dict[str, Any] = {}
        # The host's socket, when connected through it (a second connection there carries
        # terminals' pipes: core/terminal/passed_pipes.py); None over stdio or a link.
        self.socket_path: str | None = None
        # What closes with this connection (a terminals' pipe channel: remote_pty.py).
        self.closers: list[Callable[[], None]] = []
        # What the view waits for once it closed this connection: a private host's child
        # ended and reaped (ui/window/host_view/private_host.py).
        self.ending: Callable[[], Awaitable[None]] | None = None
        # When the host was last heard (loop time of the last line read): any message, an
        # answer or a notification, says the host and the way to it are alive.
        self.heard_at = asyncio.get_running_loop().time()
        self._reading = asyncio.get_running_loop().create_task(self._read())

    # -- connecting ----------------------------------------------------------------------

    @classmethod
    async def connect(
        cls, place: HostPlace | None = None, *, client: str = "view", version: str = wire.VERSION
    ) -> Self:
        """Connect to the running host and initialize; raises OSError when none runs and
        VersionRefused when it is another version."""
        place = place or HostPlace.for_user()
        reader, writer = await asyncio.open_unix_connection(str(place.socket), limit=wire.MAX_LINE)
        self = cls(reader, writer)
        self.socket_path = str(place.socket)
        try:
            await self.initialize(client, version)
        except BaseException:
            await self.aclose()
            raise
        return self

    @classmethod
    async def attach_or_start(
        cls,
        place: HostPlace | None = None,
        *,
        client: str = "view",
        env: dict[str, str] | None = None,
        args: tuple[str, ...] = (),
    ) -> Self:
        """Attach to the user's host, starting one first when none runs, or when the one
        running is another version that runs nothing (it ends first: an upgrade's first
        window). Raises VersionRefused when the other version runs something."""
        place = place or HostPlace.for_user()
        try:
            return await cls.connect(place, client=client)
        except OSError:
            pass
        except VersionRefused as refused:
            if not refused.gives_way:
                raise
            await _ended(place)
        start_host(env=env, args=args)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + START_TIMEOUT
        while True:
            try:
                return await cls.connect(place, client=client)
            except OSError:
                if loop.time() > deadline:
                    raise OSError(
                        f"the melgui host did not start; see {place.directory / 'host.log'}"
                    ) from None
                await asyncio.sleep(0.05)

    async def initialize(self, client: str, version: str = wire.VERSION) -> None:
        try:
            self.info = await self.call(
                "initialize", version=version, protocol=wire.PROTOCOL, client=client
            )
        except RpcError as exc:
            if exc.code == wire.VERSION_MISMATCH:
                gives_way = isinstance(exc.data, dict) and exc.data.get("gives_way") is True
                raise VersionRefused(exc.message, gives_way=gives_way) from None
            raise

    # -- calls ---------------------------------------------------------------------------

    async def call(self, method: str, **params: Any) -> Any:
        if self.gone:
            raise HostGone(self.gone)
        self._next += 1
        ident = self._next
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._waiting[ident] = future
        try:
            self._writer.write(wire.encode(wire.request(ident, method, params)))
            await self._writer.drain()
        except BaseException:
            self._waiting.pop(ident, None)
            future.cancel()  # nobody waits for its answer: none is said unheard
            raise
        return await future

    def notify(self, method: str, **params: Any) -> None:
        """A request that needs no answer (keys to a terminal, an acknowledgement),
        written now, in order with every other."""
        if not self._writer.is_closing():
            self._writer.write(wire.encode(wire.notification(method, params)))

    async def attach(
        self, sessions: dict[str, int | None], page: int | None = None
    ) -> dict[str, Any]:
        """Attach to sessions, each from the last number this view has (None: from a
        snapshot, of the last `page` messages only when given); the missed changes are
        checked and handed on like any others."""
        extra = {} if page is None else {"page": page}
        answer: dict[str, Any] = await self.call("session/attach", sessions=sessions, **extra)
        for session_id, part in answer.items():
            if "snapshot" in part:
                self.last_seq[session_id] = part["snapshot"]["seq"]
            else:
                self._heard(session_id, part["changes"])
        return answer

    def _heard(self, session_id: str, changes: list[Record]) -> None:
        last = self.last_seq.get(session_id)
        for record in changes:
            seq = record["seq"]
            if last is not None and seq != last + 1:
                self.gaps.append(f"{session_id}: {seq} after {last}")
            last = seq
        if last is not None:
            self.last_seq[session_id] = last
        if self.on_changes is not None and changes:
            self.on_changes(session_id, changes)
        listener = self.sessions.get(session_id)
        if listener is not None and changes:
            listener(changes)

    async def _read(self) -> None:
        reason = HOST_GONE
        clock = time.perf_counter
        turn = clock()  # when this task last let the loop run (see READ_TURN)
        try:
            while True:
                waited = clock()
                line = await self._reader.readline()
                if not line:
                    break
                now = clock()
                if now - waited > READ_WAITED:  # it waited for the line: the loop ran
                    turn = now
                elif now - turn > READ_TURN:  # lines read back to back: the loop's turn
                    await asyncio.sleep(0)
                    turn = clock()
                self.heard_at = asyncio.get_running_loop().time()
                message = wire.decode(line)
                if "method" in message:
                    params = message.get("params") or {}
                    size = params.get(wire.PAYLOAD)
                    if isinstance(size, int):  # raw bytes follow the line (terminal output)
                        params[wire.PAYLOAD] = await self._reader.readexactly(size)
                    if message["method"] == "session/changes":
                        self._heard(params["session"], params["changes"])
                    elif self.on_notification is not None:
                        self.on_notification(message["method"], params)
                    continue
                future = self._waiting.pop(message.get("id"), None)  # type: ignore[arg-type]
                error = message.get("error")
                if future is None:
                    if error is not None:  # a refusal before any request
                        reason = error.get("message", reason)
                    continue
                if future.done():  # its caller stopped waiting (cancelled, timed out)
                    continue
                if error is not None:
                    future.set_exception(
                        RpcError(error["code"], error["message"], error.get("data"))
                    )
                else:
                    future.set_result(message.get("result"))
        except (
            ConnectionError,
            RpcError,
            ValueError,
            asyncio.LimitOverrunError,
            asyncio.IncompleteReadError,
        ):
            pass
        self.gone = reason
        for future in self._waiting.values():
            if not future.done():
                future.set_exception(HostGone(reason))
        self._waiting.clear()
        self._close_companions()
        if self.on_gone is not None:
            self.on_gone(reason)

    def _close_companions(self) -> None:
        closers, self.closers = self.closers, []
        for close in closers:
            close()

    async def wait_gone(self) -> str:
        await asyncio.shield(self._reading)
        return self.gone

    async def aclose(self) -> None:
        self.on_gone = None  # closed by this view: not the host's end
        self._close_companions()
        self._writer.close()
        with contextlib.suppress(Exception):
            await self._writer.wait_closed()
        self._reading.cancel()
        with contextlib.suppress(asyncio.CancelledError, Exception):
            await self._reading
        ending, self.ending = self.ending, None
        if ending is not None:
            await ending()


async def _ended(place: HostPlace) -> None:
    """Until the host that gave way has let go of the one-host lock (its process gone),
    so that the host started next is not turned away as a second one."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + START_TIMEOUT
    while (held := place.hold_lock()) is None:
        if loop.time() > deadline:
            raise OSError(f"the other melgui host did not end; see {place.directory / 'host.log'}")
        await asyncio.sleep(0.05)
    held.close()


def host_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "melgui", "host", *args]


def start_host(*, env: dict[str, str] | None = None, args: tuple[str, ...] = ()) -> int:
    """Start `melgui host` detached from this process (its own session, so it outlives
    the view); its log goes to host.log beside the socket. Returns its pid."""
    place = HostPlace.for_user()
    log = open(Path(place.directory) / "host.log", "ab")  # noqa: SIM115 - the child keeps it
    try:
        child = subprocess.Popen(
            host_command(*args),
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=log,
            env=env if env is not None else dict(os.environ),
            start_new_session=True,
        )
    finally:
        log.close()
    # Reaped when it ends, by a thread that holds it meanwhile: no zombie left behind by a
    # host that ends before the view, and no "still running" warning for a dropped Popen.
    threading.Thread(target=child.wait, name=f"melgui host {child.pid}", daemon=True).start()
    return child.pid
