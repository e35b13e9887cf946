"""A session's changes reach a view in batches, one per frame, with deltas merged: 2,000
streamed deltas are far fewer messages, and the text is whole and in order."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from melgui.host.records import streamed_text
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.host_process import HostProcess
from tests.host.conftest import open_session, wait_for

DELTAS = 2000


async def test_deltas_are_merged_into_a_few_batches(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([*[text(f"{n} ") for n in range(DELTAS)], done()])
    client = await host.client()
    batches: list[list[dict[str, Any]]] = []
    client.on_changes = lambda sid, changes: batches.append(changes)
    try:
        session = await open_session(client, str(tmp_path), scripted_relay.base_url)
        await client.attach({session: None})
        await client.call("turn/prompt", session=session, text="count")
        await wait_for(client, session, lambda s: not s["busy"])
        while not any(r["type"] == "idle" for b in batches for r in b):
            await wait_for(client, session, lambda s: True)
        records = [r for batch in batches for r in batch]
        streamed = streamed_text(records)
        assert streamed == "".join(f"{n} " for n in range(DELTAS))
        text_records = sum(
            r["type"] == "change" and r["change"]["kind"] == "text_appended" for r in records
        )
        assert len(batches) < DELTAS // 4 and text_records <= len(batches)
        assert [r["seq"] for r in records] == list(range(1, len(records) + 1))
        assert client.gaps == []
    finally:
        await client.aclose()
