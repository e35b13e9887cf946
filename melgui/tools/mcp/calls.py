"""A tools/call in flight: which of the desk's calls it is, what progress the server has
reported, and its clock. `timeout` is an idle limit: each progress report starts it
again, and time spent waiting on the person (a form the server asked for) does not count.
A hard ceiling of CEILING_FACTOR × timeout ends even a call that keeps reporting.

    flight = Flight(RunningCall("assistant", "c1", "mcp__files__index"))
    result = await flight.timed(session.call_tool(...), idle=60.0)   # raises CallTimeout
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Iterator
from typing import Literal, TypeVar

from melgui.core.protocol.tools.mcp.asks import Progress, RunningCall

__all__ = ["CEILING_FACTOR", "CallTimeout", "Flight", "Progress", "RunningCall"]

CEILING_FACTOR = 10
T = TypeVar("T")


class CallTimeout(Exception):
    def __init__(self, why: Literal["idle", "ceiling"], seconds: float) -> None:
        super().__init__(why)
        self.why = why
        self.seconds = seconds


class Flight:
    def __init__(self, call: RunningCall) -> None:
        self.call = call
        self.progress: Progress | None = None
        self._heard = time.monotonic()
        self._person = 0  # requests for input open during this call

    def heard(self, progress: Progress) -> None:
        self.progress = progress
        self._heard = time.monotonic()

    @contextlib.contextmanager
    def waiting_on_the_person(self) -> Iterator[None]:
        self._person += 1
        try:
            yield
        finally:
            self._person -= 1
            self._heard = time.monotonic()

    async def timed(self, work: Awaitable[T], *, idle: float) -> T:
        """`work`'s result; cancels it when idle for `idle` s or past the ceiling."""
        task = asyncio.ensure_future(work)
        started = time.monotonic()
        ceiling = idle * CEILING_FACTOR
        try:
            while True:
                now = time.monotonic()
                if self._person:
                    self._heard = now
                left = min(self._heard + idle, started + ceiling) - now
                if left <= 0:
                    if now - started >= ceiling:
                        raise CallTimeout("ceiling", ceiling)
                    raise CallTimeout("idle", idle)
                done, _ = await asyncio.wait({task}, timeout=left)
                if done:
                    return task.result()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await task
