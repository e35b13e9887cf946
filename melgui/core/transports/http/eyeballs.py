"""Connecting to a host name as RFC 8305 says ("happy eyeballs"): its addresses tried in
turn, families alternated, each next one started when the last fails or after DELAY_S,
the first to connect kept.

Not asyncio's own race (`create_connection(happy_eyeballs_delay=...)`): on Python 3.11 a
cancel that reached it while one attempt failed went unheard by the next one (its
`wait_for` returned instead of raising), which then connected on its own with nothing
left to close its socket. Here one coroutine holds every socket it tries, and whatever
ends it (a cancel, a timeout, a winner) closes all but the winner before it returns, in
the same turn: a loop that stops right after leaves none to the collector.
"""

from __future__ import annotations

import asyncio
import socket
from collections import deque
from typing import Any

DELAY_S = 0.25  # as httpx's anyio: a dead IPv6 route costs this, not the connect timeout

AddrInfo = tuple[Any, ...]  # (family, type, proto, canonname, sockaddr), getaddrinfo's


def interleave(infos: list[AddrInfo]) -> list[AddrInfo]:
    """The addresses with their families alternated, the resolver's first family first."""
    by_family: dict[int, list[AddrInfo]] = {}
    for info in infos:
        by_family.setdefault(info[0], []).append(info)
    lists = list(by_family.values())
    longest = max((len(found) for found in lists), default=0)
    return [found[i] for i in range(longest) for found in lists if i < len(found)]


def _drop(loop: asyncio.AbstractEventLoop, sock: socket.socket) -> None:
    """Close a socket an attempt may still wait on: its writer removed first, so the
    attempt's end never touches a descriptor the number is reused for."""
    if sock.fileno() != -1:
        loop.remove_writer(sock.fileno())
    sock.close()


def _failure(errors: list[OSError], host: str) -> OSError:
    if not errors:
        return OSError(f"no address to connect to for {host}")
    if len({str(error) for error in errors}) == 1:
        return errors[0]
    return OSError("Multiple exceptions: " + ", ".join(str(error) for error in errors))


async def open_socket(host: str, port: int, delay: float = DELAY_S) -> socket.socket:
    """A connected socket to `host` (a name) at `port`; OSError when no address takes."""
    loop = asyncio.get_running_loop()
    waiting = deque(interleave(await loop.getaddrinfo(host, port, type=socket.SOCK_STREAM)))
    attempts: dict[asyncio.Task[None], socket.socket] = {}
    tried: list[socket.socket] = []
    errors: list[OSError] = []
    winner: socket.socket | None = None
    try:
        while winner is None and (waiting or attempts):
            if waiting:
                family, kind, proto, _, address = waiting.popleft()
                try:
                    sock = socket.socket(family, kind, proto)
                except OSError as exc:  # a family this machine lacks
                    errors.append(exc)
                    continue
                tried.append(sock)
                sock.setblocking(False)
                attempts[loop.create_task(loop.sock_connect(sock, address))] = sock
            done, _ = await asyncio.wait(
                attempts, timeout=delay if waiting else None,
                return_when=asyncio.FIRST_COMPLETED,
            )  # fmt: skip
            for task in done:
                sock = attempts.pop(task)
                error = task.exception()
                if error is None and winner is None:
                    winner = sock
                elif isinstance(error, OSError):
                    errors.append(error)
                    _drop(loop, sock)
                elif error is not None:
                    raise error
        if winner is None:
            raise _failure(errors, host)
        return winner
    finally:
        for task in attempts:
            if task.done() and not task.cancelled():
                task.exception()  # seen: no "never retrieved" later
            else:
                task.cancel()
        for sock in tried:
            if sock is not winner:
                _drop(loop, sock)
