"""A view of `melgui host` as a process of its own: `python -m tests.fakes.host_view DIR
FOLDER URL PROMPT` opens a session on FOLDER against the relay at URL, attaches, prompts,
and prints {"session": id} and then every change record as one JSON line."""

from __future__ import annotations

import asyncio
import json
import sys
from pathlib import Path

from melgui.host.client import HostClient
from melgui.host.place import HostPlace


def _print(data: object) -> None:
    sys.stdout.write(json.dumps(data) + "\n")
    sys.stdout.flush()


async def main(directory: str, folder: str, url: str, prompt: str) -> None:
    client = await HostClient.connect(HostPlace(Path(directory)), client="view process")

    def show(session: str, changes: list[dict[str, object]]) -> None:
        for change in changes:
            _print(change)

    client.on_changes = show
    opened = await client.call(
        "session/open", folder=folder, settings={"connection": "relay", "relay_url": url},
        model="m1",
    )  # fmt: skip
    _print({"session": opened["id"]})
    await client.attach({opened["id"]: None})
    await client.call("turn/prompt", session=opened["id"], text=prompt)
    await client.wait_gone()


if __name__ == "__main__":
    asyncio.run(main(*sys.argv[1:5]))
