"""kill -9 of a view mid-turn: the turn goes on in the host, and the next view gets
exactly what it missed, numbered with no gap and no duplicate."""

from __future__ import annotations

import threading
from pathlib import Path

from melgui.host.records import streamed_text
from tests.fakes import ScriptedRelay, done, hold, text
from tests.fakes.host_process import HostProcess, ViewProcess
from tests.host.conftest import wait_for


async def test_a_view_killed_mid_turn_misses_nothing_of_the_turn(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_relay.script(
        [text("Part one. "), hold(gate), text("Part two, "), text("streamed unseen."), done()]
    )
    view = ViewProcess(host, str(tmp_path), scripted_relay.base_url, "tell me")
    session = view.read_until(lambda d: "session" in d)["session"]
    seen = view.read_until(lambda d: streamed_text([d]) != "")
    assert streamed_text([seen]) == "Part one. "
    last_seen = max(line["seq"] for line in view.lines if "seq" in line)
    view.kill()  # mid-turn: the relay holds the rest of the leg
    gate.set()

    client = await host.client()
    try:
        await wait_for(client, session, lambda s: not s["busy"])
        heard: list[dict[str, object]] = []
        client.on_changes = lambda sid, changes: heard.extend(changes)
        answer = await client.attach({session: last_seen})
        missed = answer[session]["changes"]
        seqs = [r["seq"] for r in missed]
        assert seqs == list(range(last_seen + 1, last_seen + 1 + len(seqs)))  # no gap, no dup
        streamed = streamed_text(missed)
        assert streamed == "Part two, streamed unseen."
        assert [r["type"] for r in missed[-2:]] == ["turn_end", "idle"]
        assert missed[-2]["outcome"] == "done"
        assert client.gaps == []

        fresh = await host.client("second view")
        snapshot = (await fresh.attach({session: None}))[session]["snapshot"]
        assert snapshot["seq"] == seqs[-1]
        assert [m["role"] for m in snapshot["messages"]] == ["user", "assistant"]
        assert snapshot["messages"][1]["content"] == "Part one. Part two, streamed unseen."
        await fresh.aclose()
    finally:
        await client.aclose()
