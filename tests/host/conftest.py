"""A real `melgui host` process per test, in a runtime directory of its own."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any

import pytest

from melgui.host.client import HostClient
from tests.fakes import tool_call
from tests.fakes.host_process import HostProcess, runtime_dir


@pytest.fixture
def host() -> Iterator[HostProcess]:
    with runtime_dir() as runtime:
        process = HostProcess(runtime).start()
        try:
            yield process
        finally:
            process.stop()


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
