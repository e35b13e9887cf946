"""A burst of the host's lines (what came while the window was busy) is read over several
turns of the view's loop, not in one: its timers and its drawing run in between."""

from __future__ import annotations

import asyncio
import socket
import time

from melgui.host import wire
from melgui.host.client import READ_TURN, HostClient

LINES = 400
COST = 0.0005  # seconds a view spends on each batch it hears


async def test_a_burst_of_lines_lets_the_loop_run_between() -> None:
    ours, theirs = socket.socketpair()
    reader, writer = await asyncio.open_connection(sock=ours, limit=wire.MAX_LINE)
    client = HostClient(reader, writer)
    ticks = 0
    heard: list[int] = []  # the loop's ticks when each batch was heard

    def listener(records: list[dict[str, object]]) -> None:
        busy_until = time.perf_counter() + COST
        while time.perf_counter() < busy_until:
            pass
        heard.append(ticks)

    client.sessions["s1"] = listener
    batches = [{"session": "s1", "changes": [{"seq": n, "type": "idle"}]} for n in range(LINES)]
    burst = b"".join(wire.encode(wire.notification("session/changes", b)) for b in batches)

    async def tick() -> None:
        nonlocal ticks
        while len(heard) < LINES:
            ticks += 1
            await asyncio.sleep(0)

    await asyncio.sleep(0)  # the client waits for its first line
    theirs.sendall(burst)  # all of it at once, read back to back
    await asyncio.wait_for(tick(), 30)
    await client.aclose()
    theirs.close()
    assert len(heard) == LINES and client.gaps == []
    # LINES x COST of work: the loop ran at least every READ_TURN of it (a margin of 4 for
    # a busy machine); read in one turn, the ticks would not move.
    assert heard[-1] - heard[0] >= LINES * COST / READ_TURN / 4
