"""The bulk transport connecting to a host name with several addresses (happy eyeballs),
over real loopback sockets: an address that refuses, one that never answers (a listener
whose queue is full: its connects wait), one that serves. The name's addresses come from
the loop's resolver, answering the test's names from a table (there is no DNS here)."""

from __future__ import annotations

import asyncio
import gc
import os
import socket
import warnings
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from typing import Any

import httpx

from melgui.core.transports.http.bulk import BulkTransport
from melgui.core.transports.http.tls import shared_context

TIMEOUTS = {"connect": 30.0, "read": 30.0, "write": 30.0, "pool": 30.0}


class Resolving(asyncio.SelectorEventLoop):
    """A real loop whose resolver knows the test's names."""

    def __init__(self, names: dict[str, list[tuple[str, int]]]) -> None:
        super().__init__()
        self.names = names

    async def getaddrinfo(self, host: Any, port: Any, *args: Any, **kwargs: Any) -> Any:
        if host in self.names:
            tcp = (socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP, "")
            return [(*tcp, address) for address in self.names[host]]
        return await super().getaddrinfo(host, port, *args, **kwargs)


@contextmanager
def blackholed() -> Iterator[int]:
    """A loopback port whose connects never complete: its listener's queue is full."""
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen(0)
        port = listener.getsockname()[1]
        with socket.create_connection(("127.0.0.1", port)):  # fills the queue
            yield port


def refused() -> int:
    with socket.socket() as free:
        free.bind(("127.0.0.1", 0))
        return int(free.getsockname()[1])


def open_sockets() -> int:
    found = 0
    for fd in os.listdir("/proc/self/fd"):
        with suppress(OSError):  # the listing's own descriptor, closed by now
            found += os.readlink(f"/proc/self/fd/{fd}").startswith("socket:")
    return found


def request(port: int) -> httpx.Request:
    return httpx.Request("GET", f"http://race.test:{port}/", extensions={"timeout": TIMEOUTS})


def test_a_connect_cancelled_mid_race_closes_every_socket_it_tried() -> None:
    # The first address refuses, the next waits: a cancel landing at any turn of the race
    # (as a window closing while a leg connects) closes what was tried before it returns.
    # asyncio's own race on 3.11 left the waiting attempt's socket open at some turns
    # (its cancel swallowed as the refusal arrived), for ever, and others to the collector.
    with blackholed() as waits:
        loop = Resolving({"race.test": [("127.0.0.1", refused()), ("127.0.0.1", waits)]})
        transport = BulkTransport(shared_context(False), trust_env=False)

        async def cancelled_after(turns: int) -> int:
            before = open_sockets()
            connecting = asyncio.ensure_future(transport.handle_async_request(request(waits)))
            for _ in range(turns):
                await asyncio.sleep(0)
            connecting.cancel()
            with suppress(asyncio.CancelledError):
                await connecting
            return open_sockets() - before  # no further turn: as the loop stops here

        try:
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always", ResourceWarning)
                left = {
                    turns: loop.run_until_complete(cancelled_after(turns)) for turns in range(12)
                }
                loop.run_until_complete(transport.aclose())
                loop.close()
                gc.collect()
        finally:
            if not loop.is_closed():
                loop.close()
    assert {turns: n for turns, n in left.items() if n} == {}
    assert [w for w in caught if issubclass(w.category, ResourceWarning)] == []


def test_a_name_connects_past_an_address_that_never_answers() -> None:
    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        writer.write(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
        await writer.drain()
        writer.close()

    with blackholed() as waits:
        loop = Resolving({})
        try:

            async def scenario() -> bytes:
                server = await asyncio.start_server(serve, "127.0.0.1", 0)
                port = server.sockets[0].getsockname()[1]
                loop.names["race.test"] = [("127.0.0.1", waits), ("127.0.0.1", port)]
                async with httpx.AsyncClient(
                    transport=BulkTransport(shared_context(False), trust_env=False)
                ) as client:
                    got = await client.get(f"http://race.test:{port}/")
                server.close()
                await server.wait_closed()
                return got.content

            assert loop.run_until_complete(scenario()) == b"ok"
        finally:
            loop.close()
