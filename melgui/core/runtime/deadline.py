"""Waiting with a time limit without losing a cancel.

    reply = await within(reader.readline(), 10)     # TimeoutError after 10 s

Python 3.11's `asyncio.wait_for` swallows a cancel that arrives in the same loop turn as
its awaitable's result: it returns the result and the cancelled task runs on (CPython
gh-86296, fixed in 3.12 by building wait_for on `asyncio.timeout`). A close that cancels
a supervisor and awaits it then waits forever, as a remote link's close did when its
process ended just as the window closed. `within` is 3.12's wait_for on 3.11: the
awaitable runs in the caller's task under `asyncio.timeout`, so a cancel is always
raised. ruff bans `asyncio.wait_for` in melgui (pyproject.toml) so the trap stays shut.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def within(awaitable: Awaitable[T], timeout: float | None) -> T:
    """`await awaitable`, raising TimeoutError after `timeout` seconds (None: no limit). On a
    timeout the awaitable is cancelled (wrap it in `asyncio.shield` to let it run on)."""
    async with asyncio.timeout(timeout):
        return await awaitable
