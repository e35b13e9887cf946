"""A view reattaching with a page takes the end of each conversation first and the whole
later, with the changes in between applied once each, in order, to the right entries."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.protocol.loop_events import TurnFinished
from melgui.core.thread.codec import entry_to_json, snapshot_from_json
from melgui.core.thread.entries import AssistantEntry
from melgui.host.client import HostClient
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.host_process import HostProcess
from tests.host.conftest import open_session, wait_for
from tests.host.test_remote_session import until


async def three_turns(client: HostClient, session: str) -> None:
    for n in range(3):
        await client.call("turn/prompt", session=session, text=f"question {n}")
        await wait_for(client, session, lambda s, n=n: not s["busy"])


async def host_thread(client: HostClient, session: str) -> list[dict[str, object]]:
    snapshot = (await client.call("session/attach", sessions={session: None}))[session]
    return [entry_to_json(e) for e in snapshot_from_json(snapshot["snapshot"]["thread"]).entries]


async def test_a_paged_reattach_paints_the_end_then_takes_the_whole(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        *[[text(f"Answer {n}."), done()] for n in range(3)],
        [text("Answer "), text("three."), done()],
    )
    opener, window = await host.client("opener"), await host.client("window")
    try:
        session_id = await open_session(opener, str(tmp_path), scripted_relay.base_url)
        await three_turns(opener, session_id)
        described = await window.call("session/list")
        (session,) = await RemoteSession.reattach(window, described, page=2)
        assert session.paged
        ends: list[object] = []
        session.subscribe(lambda e: ends.append(e) if isinstance(e, TurnFinished) else None)
        assert [m.content for m in session.conversation.messages] == ["question 2", "Answer 2."]
        # A turn while the copy holds only the end: its changes land on the right entries.
        await opener.call("turn/prompt", session=session_id, text="question 3")
        await wait_for(opener, session_id, lambda s: not s["busy"])
        await until(lambda: session.thread.state.turns == 4)
        said = [e.text for e in session.thread.entries if isinstance(e, AssistantEntry)]
        assert said == ["Answer 2.", "Answer three."]
        wholes: list[str] = []
        session.on_whole = lambda: wholes.append("whole")
        await session.whole()
        assert not session.paged and wholes == ["whole"]
        assert len(ends) == 1  # the fourth turn's end, heard once: not again from the whole
        assert len(session.conversation.messages) == 8
        copied = [entry_to_json(e) for e in session.thread.entries]
        assert copied == await host_thread(opener, session_id)
        assert window.gaps == []
        session.keep_running = True
        await session.aclose()
    finally:
        await opener.aclose()
        await window.aclose()


async def test_a_page_that_is_no_number_is_refused_in_plain_words(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    client = await host.client("window")
    try:
        session = await open_session(client, str(tmp_path), scripted_relay.base_url)
        with pytest.raises(RpcError, match="page must be a number of messages"):
            await client.call("session/attach", sessions={session: None}, page="all")
        whole = await client.call("session/attach", sessions={session: None}, page=50)
        assert "earlier" not in whole[session]["snapshot"]  # nothing was left out
    finally:
        await client.aclose()
