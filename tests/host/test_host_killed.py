"""kill -9 of the host mid-turn: the view says so in plain words, a new host reopens the
conversation valid from the journal, the open call gets its one result, and the numbers
go on from where they were."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

from melgui.core.protocol.messages import Conversation, Message
from melgui.host import change_journal
from melgui.host.client import HostClient
from melgui.host.records import streamed_text
from tests.fakes import ScriptedRelay, done, hold, text, tool_calls
from tests.fakes.agent_loops import assert_valid
from tests.fakes.host_process import HostProcess
from tests.host.conftest import open_session, wait_for, write_b


async def test_a_host_killed_with_a_call_open_reopens_it_answered(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        [text("Writing."), tool_calls(write_b())],
        [text("After the restart."), done()],
    )  # fmt: skip
    view = await host.client()
    gone: list[str] = []
    view.on_gone = gone.append
    session = await open_session(view, str(tmp_path), scripted_relay.base_url)
    await view.attach({session: None})
    await view.call("turn/prompt", session=session, text="write b")
    await wait_for(view, session, lambda s: s["approvals"])
    last = view.last_seq[session]
    host.kill()
    reason = await view.wait_gone()
    assert reason == gone[0]
    assert "host stopped unexpectedly" in reason and "reopens the conversations" in reason
    await view.aclose()

    host.start()
    again = await host.client("view after the crash")
    try:
        listed = await again.call("session/list")
        assert [s["id"] for s in listed] == [session]
        assert not listed[0]["busy"] and listed[0]["approvals"] == []
        missed = (await again.attach({session: last}))[session]["changes"]
        assert [r["seq"] for r in missed] == list(range(last + 1, last + 1 + len(missed)))
        assert "interrupted" in [r["type"] for r in missed]
        snapshot = (await again.attach({session: None}))[session]["snapshot"]
        conversation = Conversation([Message.from_json(m) for m in snapshot["messages"]])
        assert_valid(conversation)
        results = [m for m in conversation.messages if m.tool_call_id == "w1"]
        assert len(results) == 1 and results[0].status != "ok"
        assert not (tmp_path / "b.txt").exists()

        await again.call("turn/prompt", session=session, text="go on")
        await wait_for(again, session, lambda s: not s["busy"])
        legs = scripted_relay.wait_for_legs(2)
        assert legs[1].last_user_text == "go on"
        assert again.gaps == []
    finally:
        await again.aclose()


async def test_a_host_killed_mid_stream_keeps_what_was_saved(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_relay.script([text("Half of a "), hold(gate), text("never sent"), done()])
    view = await host.client()
    session = await open_session(view, str(tmp_path), scripted_relay.base_url)
    await view.attach({session: None})
    texts: list[str] = []
    view.on_changes = lambda sid, changes: texts.append(streamed_text(changes))
    await view.call("turn/prompt", session=session, text="say it")
    while not "".join(texts):
        await wait_for(view, session, lambda s: True)
    host.kill()
    gate.set()
    await view.wait_gone()
    await view.aclose()

    host.start()
    again: HostClient = await host.client()
    try:
        snapshot = (await again.attach({session: None}))[session]["snapshot"]
        conversation = Conversation([Message.from_json(m) for m in snapshot["messages"]])
        assert_valid(conversation)
        assert conversation.messages[0].content == "say it"
        assert all("never sent" not in m.content for m in conversation.messages)
        assert "interrupted" in [r["type"] for r in snapshot["tail"]]
    finally:
        await again.aclose()


async def test_a_view_closing_its_own_connection_is_not_the_hosts_end(host: HostProcess) -> None:
    view = await host.client()
    gone: list[str] = []
    view.on_gone = gone.append
    await view.aclose()
    await asyncio.sleep(0.1)
    assert gone == []  # a window would start a new host for nothing
    again = await host.client("still there")
    try:
        assert await again.call("session/list") == []
    finally:
        again.on_gone = gone.append
        host.kill()
        assert "host stopped unexpectedly" in await again.wait_gone()
        assert len(gone) == 1
        await again.aclose()


async def test_a_session_a_window_took_over_is_not_reopened_by_the_next_host(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    """The host died and no new one could start: the window runs the main conversation
    itself and marks it taken in the journal (host_end.fall_back). A host started later
    reopens the other sessions that were open, not that one: the window owns it."""
    scripted_relay.script([text("Main."), done()], [text("Worker."), done()])
    view = await host.client()
    taken = await open_session(view, str(tmp_path), scripted_relay.base_url)
    other = await open_session(view, str(tmp_path), scripted_relay.base_url)
    for session in (taken, other):
        await view.call("turn/prompt", session=session, text="hi")
        await wait_for(view, session, lambda s: not s["busy"])
    last = (await view.attach({taken: None}))[taken]["snapshot"]["seq"]
    host.kill()
    await view.wait_gone()
    await view.aclose()

    assert change_journal.take_over([taken], "window 4242") == [taken]
    assert change_journal.take_over([taken], "window 4243") == []  # once: it is taken
    journal = change_journal.ChangeJournal(change_journal.journal_path())
    try:
        assert journal.state(taken) == change_journal.TAKEN
        assert journal.state(other) == change_journal.OPEN
        said = journal.since(taken, last)
        assert said == [{"seq": last + 1, "type": "taken", "by": "window 4242"}]
    finally:
        journal.close()

    host.start()
    again = await host.client("view after the crash")
    try:
        listed = await again.call("session/list")
        assert [s["id"] for s in listed] == [other]  # the window's is not reopened
        await host_closes(again, other)
    finally:
        await again.aclose()
    journal = change_journal.ChangeJournal(change_journal.journal_path())
    try:  # and no host after that one reopens it either
        assert journal.state(taken) == change_journal.TAKEN
        assert [row.id for row in journal.open_sessions()] == []
    finally:
        journal.close()


async def host_closes(client: HostClient, session: str) -> None:
    await client.call("session/close", session=session)
