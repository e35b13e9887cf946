"""A TCP forwarder the test owns, between the ssh client and sshd, that makes network faults.

    with FaultProxy(upstream_port) as proxy:       # listens on 127.0.0.1:proxy.port
        proxy.black_hole()                         # nothing passes, either way
        proxy.let_through()                        # what was held passes, then all the rest
        proxy.drop()                               # every open connection reset (RST)

A black hole holds bytes, as a network whose packets are lost holds them in TCP's
retransmissions: nothing is read from either side while it lasts, so nothing is lost
and nothing arrives. A connection made during it is accepted (the kernel does that) and
reaches sshd only once the traffic is let through. `drop` closes both ends of every open
connection with a reset, as a NAT box that forgot them would.

The proxy runs its own asyncio loop on a thread, so a test that waits on a process (or a
benchmark's own loop) keeps it going.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import struct
import threading
from types import TracebackType


class FaultProxy:
    def __init__(self, upstream_port: int, upstream_host: str = "127.0.0.1") -> None:
        self.upstream = (upstream_host, upstream_port)
        self.port = 0
        self.accepted = 0  # connections accepted since the start
        self.held = 0  # connections accepted while traffic was black-holed
        self._loop = asyncio.new_event_loop()
        self._open: asyncio.Event | None = None
        self._ends: set[asyncio.StreamWriter] = set()
        self._server: asyncio.Server | None = None
        self._ready = threading.Event()
        self._thread = threading.Thread(target=self._run, name="fault-proxy", daemon=True)

    # -- the test's side -----------------------------------------------------------------

    def start(self) -> FaultProxy:
        self._thread.start()
        self._ready.wait(30)
        if not self.port:
            raise RuntimeError("the fault proxy did not start")
        return self

    def black_hole(self) -> None:
        self._call(self._close_gate)

    def let_through(self) -> None:
        self._call(self._open_gate)

    def drop(self) -> None:
        """Reset every connection open now; later connections pass as before."""
        self._call(self._reset_all)

    @property
    def passing(self) -> bool:
        return self._open is not None and self._open.is_set()

    def stop(self) -> None:
        if self._thread.is_alive():
            self._loop.call_soon_threadsafe(self._loop.stop)
            self._thread.join(10)

    def __enter__(self) -> FaultProxy:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    def _call(self, what: object) -> None:
        done = threading.Event()

        def run() -> None:
            try:
                what()  # type: ignore[operator]
            finally:
                done.set()

        self._loop.call_soon_threadsafe(run)
        done.wait(10)

    # -- the proxy's loop ----------------------------------------------------------------

    def _run(self) -> None:
        asyncio.set_event_loop(self._loop)
        self._loop.run_until_complete(self._serve())
        self._ready.set()
        try:
            self._loop.run_forever()
        finally:
            self._reset_all()
            if self._server is not None:
                self._server.close()
            pending = asyncio.all_tasks(self._loop)  # the connections' pipes, ended here
            for task in pending:
                task.cancel()
            self._loop.run_until_complete(asyncio.gather(*pending, return_exceptions=True))
            self._loop.close()

    async def _serve(self) -> None:
        self._open = asyncio.Event()
        self._open.set()
        self._server = await asyncio.start_server(self._accepted, "127.0.0.1", 0)
        self.port = int(self._server.sockets[0].getsockname()[1])

    def _close_gate(self) -> None:
        assert self._open is not None
        self._open.clear()

    def _open_gate(self) -> None:
        assert self._open is not None
        self._open.set()

    def _reset_all(self) -> None:
        for end in list(self._ends):
            with contextlib.suppress(OSError):
                # SO_LINGER 0: closing sends a reset, not a polite FIN.
                sock = end.get_extra_info("socket")
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            end.transport.abort()
        self._ends.clear()

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._open is not None
        self.accepted += 1
        self._ends.add(writer)
        if not self._open.is_set():
            self.held += 1
        await self._open.wait()
        try:
            up_reader, up_writer = await asyncio.open_connection(*self.upstream)
        except OSError:
            self._ends.discard(writer)
            writer.close()
            return
        if writer.transport.is_closing():  # reset while it waited
            up_writer.close()
            return
        self._ends.add(up_writer)
        pipes = [
            asyncio.ensure_future(self._pipe(reader, up_writer)),
            asyncio.ensure_future(self._pipe(up_reader, writer)),
        ]
        await asyncio.wait(pipes, return_when=asyncio.FIRST_COMPLETED)
        for pipe in pipes:
            pipe.cancel()
        for end in (writer, up_writer):
            with contextlib.suppress(Exception):
                end.close()
        self._ends.discard(writer)
        self._ends.discard(up_writer)

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self._open is not None
        with contextlib.suppress(ConnectionError, OSError):
            while True:
                await self._open.wait()  # a black hole reads nothing: bytes wait in TCP
                data = await reader.read(65536)
                if not data:
                    return
                await self._open.wait()  # read just before the hole: held, not lost
                writer.write(data)
                await writer.drain()
