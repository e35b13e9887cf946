"""When a link to a remote melgui host is dead (melgui/remote/link.py): its process
ended, the host's end closed, or the host went silent.

    why = await until_dead(client, heartbeat=1.0, dead_after=3.0)   # then reconnect

Silent means nothing heard from the host (an answer or any notification: any line
counts) for `dead_after` seconds and MISSED heartbeats in a row with the ping
unanswered. Counting heartbeats, not one ping's deadline: a stall of this process (a
busy window, a loaded laptop) is a late tick, which counts for nothing (the answer may be
waiting, unread: asyncio runs an overdue timer before the read that would answer it), and
an answer queued behind a flood of output is not missed while the output arrives.
"""

from __future__ import annotations

import asyncio
from typing import Any

from melgui.host.client import HostClient

HEARTBEAT = 1.0  # seconds between pings
DEAD_AFTER = 3.0  # nothing heard from the host this long (and MISSED heartbeats): dead
MISSED = 3  # heartbeats in a row with the ping unanswered, before the link is dead


async def until_dead(client: HostClient, heartbeat: float, dead_after: float) -> str:
    """Ping every `heartbeat` until the link is dead; why, in words."""
    gone = asyncio.ensure_future(client.wait_gone())
    loop = asyncio.get_running_loop()
    missed = 0
    ping: asyncio.Future[Any] | None = None
    try:
        while not gone.done():
            sent_at = loop.time()
            if ping is None or ping.done():  # one ping out at a time
                ping = asyncio.ensure_future(client.call("host/ping"))
            await asyncio.wait({gone, ping}, timeout=heartbeat)
            if ping.done() and ping.exception() is not None:
                return f"the ping failed: {ping.exception()!r}"
            if ping.done() or client.heard_at >= sent_at:
                missed = 0
                await asyncio.wait({gone}, timeout=max(0.0, sent_at + heartbeat - loop.time()))
                continue
            if loop.time() - sent_at > 2 * heartbeat:
                continue  # this process stalled: an answer may be waiting, unread
            missed += 1
            silent = loop.time() - client.heard_at
            if missed >= MISSED and silent >= dead_after:
                return f"{missed} pings unanswered, nothing heard for {silent:.1f} s"
        return f"its connection ended: {client.gone or 'closed'}"
    finally:
        gone.cancel()
        if ping is not None:
            ping.cancel()
