"""A view's end of the host protocol (HostClient) over a real host process: a call its
caller stopped waiting for (cancelled, timed out) has its late answer dropped, and the
connection goes on; it hears when the host last said anything."""

from __future__ import annotations

import asyncio

from tests.fakes.host_process import HostProcess, runtime_dir


async def test_a_late_answer_to_a_cancelled_call_leaves_the_connection_working() -> None:
    with runtime_dir() as runtime:
        host = HostProcess(runtime).start()
        try:
            client = await host.client()
            before = client.heard_at
            waiting = asyncio.ensure_future(client.call("host/ping"))
            await asyncio.sleep(0)  # sent; its answer not read yet
            waiting.cancel()
            await asyncio.sleep(0.3)  # the answer arrives for nobody
            answered = await asyncio.wait_for(client.call("host/ping"), 10)
            heard = client.heard_at
            gone = client.gone
            await client.aclose()
        finally:
            host.stop()
    assert waiting.cancelled()
    assert "host" in answered and gone == ""
    assert heard > before
