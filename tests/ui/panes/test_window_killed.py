"""kill -9 of the real window (a view of the melgui host it started) mid-turn: the turn
goes on in the host, and the next view gets the whole turn, what streamed while no
window was attached included, numbered with no gap and no duplicate."""

from __future__ import annotations

import asyncio
import json
import signal
import threading
from pathlib import Path
from typing import Any

from melgui.host.client import HostClient
from melgui.host.place import HostPlace
from melgui.host.records import streamed_text
from tests.fakes import ScriptedRelay, done, hold, text
from tests.fakes.host_process import window_process


def test_a_window_killed_mid_turn_leaves_the_turn_to_the_host(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_relay.script(
        [text("Seen by the window. "), hold(gate), text("Streamed with no window."), done()]
    )
    project = tmp_path / "project"
    project.mkdir()
    driver = "tests.fakes.host_window_driver"
    with window_process(scripted_relay, driver, str(project), "work") as (window, place):
        assert window.stdout is not None
        lines: list[dict[str, Any]] = []
        while not any(line.get("text") for line in lines):
            line = window.stdout.readline()
            assert line, "the window ended before the worker streamed"
            lines.append(json.loads(line))
        session = next(line["session"] for line in lines if "session" in line)
        assert "".join(line.get("text", "") for line in lines) == "Seen by the window. "
        last = max(line["seq"] for line in lines if "seq" in line)
        window.send_signal(signal.SIGKILL)
        window.wait(timeout=30)
        window.stdout.close()
        gate.set()
        missed, snapshot = asyncio.run(_next_view(place, session, last))
    seqs = [r["seq"] for r in missed]
    assert seqs == list(range(last + 1, last + 1 + len(seqs)))
    assert streamed_text(missed) == "Streamed with no window."
    said = [m["content"] for m in snapshot["messages"] if m["role"] == "assistant"]
    assert said == ["Seen by the window. Streamed with no window."]


async def _next_view(
    place: HostPlace, session: str, last: int
) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    client = await HostClient.connect(place, client="next view")
    try:
        while any(s["busy"] for s in await client.call("session/list")):
            await asyncio.sleep(0.05)
        missed = (await client.attach({session: last}))[session]["changes"]
        snapshot = (await client.attach({session: None}))[session]["snapshot"]
        assert client.gaps == []
        return missed, snapshot
    finally:
        await client.aclose()
