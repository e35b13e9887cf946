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


async def test_history_list_gives_the_folder_s_conversations_from_the_host_s_store(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    """`history/list` (protocol 12): what a remote folder's sidebar lists of the host
    there: the folder's conversations in that host's history, newest first; a search
    reads their messages; another folder's are not listed."""
    scripted_relay.script([text("First answer."), done()], [text("Second answer."), done()])
    other = tmp_path / "other"
    other.mkdir()
    client = await host.client("view")
    try:
        ids = []
        for prompt in ("about apples", "about pears"):
            session = await open_session(client, str(tmp_path), scripted_relay.base_url)
            await client.call("turn/prompt", session=session, text=prompt)
            listed = await wait_for(client, session, lambda s: not s["busy"] and s["conversation"])
            ids.append(listed["conversation"])
            await client.call("session/close", session=session)
        rows = await client.call("history/list", folder=str(tmp_path))
        found = await client.call("history/list", folder=str(tmp_path), query="pears")
        elsewhere = await client.call("history/list", folder=str(other))
    finally:
        await client.aclose()
    assert [r["id"] for r in rows] == ids[::-1]
    assert all(r["updated_at"] >= r["created_at"] > 0 and "title" in r for r in rows)
    assert [r["id"] for r in found] == [ids[1]]
    assert elsewhere == []


async def test_a_session_closed_with_nothing_said_leaves_no_conversation_in_the_history(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    """A window opened and closed, or New conversation with nothing said: the host made
    the session's conversation as it opened, and removes it as it closes, so the
    sidebar gets no empty "New conversation" row; one with a message stays."""
    scripted_relay.script([text("Kept."), done()])
    client = await host.client("view")
    try:
        empty = await open_session(client, str(tmp_path), scripted_relay.base_url)
        said = await open_session(client, str(tmp_path), scripted_relay.base_url)
        await client.call("turn/prompt", session=said, text="keep me")
        await wait_for(client, said, lambda s: not s["busy"] and s["conversation"])
        listed = {s["id"]: s["conversation"] for s in await client.call("session/list")}
        for session in (empty, said):
            await client.call("session/close", session=session)
        rows = await client.call("history/list", folder=str(tmp_path))
    finally:
        await client.aclose()
    assert [r["id"] for r in rows] == [listed[said]]
    store = open_store()
    try:
        assert not store.exists(listed[empty]) and store.exists(listed[said])
    finally:
        store.close()
