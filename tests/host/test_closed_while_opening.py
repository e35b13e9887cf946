"""A view's session closed before the host answered `session/open` (New conversation, or
the window closed, just after it began) is closed in the host too: none is left open
there with no view, to be reopened by every later host."""

from __future__ import annotations

import asyncio
from pathlib import Path

from melgui.host.remote_session import RemoteSession
from tests.fakes import ScriptedRelay
from tests.fakes.host_process import HostProcess


async def test_a_session_closed_while_it_opens_is_closed_in_the_host(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    client = await host.client("window")
    try:
        settings = {"connection": "relay", "relay_url": scripted_relay.base_url}
        sessions = [
            RemoteSession.start(client, folder=str(tmp_path), settings=settings, source="main")
            for _ in range(3)
        ]
        assert not any(s.session_id for s in sessions)  # nothing answered yet
        await asyncio.gather(*(s.aclose() for s in sessions))
        listed = await client.call("session/list")
    finally:
        await client.aclose()
    assert listed == []
