"""A session the host runs is in the history like any other: its messages and its calls,
with their decisions and results, recorded by the desk's Recording."""

from __future__ import annotations

from pathlib import Path

from melgui.core.store import open_store
from tests.fakes import ScriptedRelay, done, text, tool_calls
from tests.fakes.host_process import HostProcess
from tests.host.conftest import open_session, wait_for, write_b


async def test_a_host_session_records_its_call_and_its_decision(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        [text("Writing."), tool_calls(write_b())],
        [text("Written."), done()],
    )  # fmt: skip
    client = await host.client("view")
    try:
        session = await open_session(client, str(tmp_path), scripted_relay.base_url)
        await client.call("turn/prompt", session=session, text="write b")
        await wait_for(client, session, lambda s: s["approvals"])
        await client.call("approval/answer", session=session, call="w1", decision="approve")
        listed = await wait_for(client, session, lambda s: not s["busy"])
    finally:
        await client.aclose()
    cid = listed["conversation"]
    store = open_store()
    try:
        calls = store.calls.of(cid)
        texts = [stored.message.content for stored in store.messages(cid)]
    finally:
        store.close()
    assert [(c.call_id, c.name, c.decision, c.result_status) for c in calls] == [
        ("w1", "write_file", "approved", "ok")
    ]
    assert texts[0] == "write b" and texts[-1] == "Written."
