"""What the host's tests share besides the `host` fixture (a real `melgui host` process per
test, in a runtime directory of its own: tests/fakes/fixtures.py)."""

from __future__ import annotations

import asyncio
from typing import Any

from melgui.host.client import HostClient
from tests.fakes import tool_call


async def wait_for(client: HostClient, session: str, check: Any) -> dict[str, Any]:
    """Poll session/list until `check(entry)` holds for the session."""
    while True:
        listed = {s["id"]: s for s in await client.call("session/list")}
        if check(listed[session]):
            return listed[session]
        await asyncio.sleep(0.05)


async def open_session(client: HostClient, folder: str, url: str) -> str:
    opened = await client.call(
        "session/open",
        folder=folder,
        settings={"connection": "relay", "relay_url": url},
        model="m1",
    )
    return str(opened["id"])


def write_b() -> Any:
    """A write_file call, which asks for approval."""
    return tool_call("write_file", {"path": "b.txt", "content": "x"}, id="w1")
