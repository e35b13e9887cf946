"""A RemoteSession drives a session of the real host process with the surface the
window's panes use: a copy of its thread, the loop's events, approvals answered here or
in another view."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    LoopEvent,
    TurnFinished,
)
from melgui.core.thread.entries import AssistantEntry
from melgui.host.records import approval_record
from melgui.host.remote_session import RemoteSession
from tests.fakes import ScriptedRelay, done, text, tool_calls
from tests.fakes.host_process import HostProcess
from tests.host.conftest import write_b


async def until(check: Callable[[], bool]) -> None:
    while not check():
        await asyncio.sleep(0.02)


def relay_settings(relay: ScriptedRelay) -> dict[str, str]:
    return {"connection": "relay", "relay_url": relay.base_url}


async def test_a_remote_session_streams_and_asks_like_a_local_one(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        [text("Writing "), text("now."), tool_calls(write_b())],
        [text("Done."), done()],
    )
    client = await host.client("window")
    try:
        session = RemoteSession.start(
            client, folder=str(tmp_path), model="m1", settings=relay_settings(scripted_relay)
        )
        events: list[LoopEvent] = []
        session.subscribe(events.append)
        session.submit("write b")  # before the host has opened it: sent once it has
        assert session.busy
        await until(lambda: any(isinstance(e, ApprovalNeeded) for e in events))
        asked = next(e for e in events if isinstance(e, ApprovalNeeded))
        assert asked.request.call.name == "write_file"
        asked.request.approve()
        await session.wait_idle()
        copy = session.thread  # the host's thread, copied from its changes
        said = "".join(e.text for e in copy.entries if isinstance(e, AssistantEntry))
        assert said == "Writing now.Done."
        assert [(c.call_id, c.phase) for c in copy.calls()] == [("w1", "ok")]
        assert sum(isinstance(e, TurnFinished) for e in events) == 1
        assert copy.state.turns == 1 and copy.state.outcome == "done"
        assert [m.role for m in session.conversation.messages] == [
            "user", "assistant", "tool", "assistant",
        ]  # fmt: skip
        assert (tmp_path / "b.txt").read_text() == "x"
        assert client.gaps == []
        await session.aclose()
    finally:
        await client.aclose()


async def test_an_answer_in_another_view_resolves_the_question_here(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([tool_calls(write_b())], [text("Not written."), done()])
    window, other = await host.client("window"), await host.client("other window")
    try:
        session = RemoteSession.start(
            window, folder=str(tmp_path), model="m1", settings=relay_settings(scripted_relay)
        )
        asked: list[ApprovalNeeded] = []
        session.subscribe(lambda e: asked.append(e) if isinstance(e, ApprovalNeeded) else None)
        session.submit("write b")
        await until(lambda: bool(asked))
        answer = await other.call(
            "approval/answer", session=session.session_id, call="w1", decision="deny"
        )
        assert answer == {"answered": True}
        await session.wait_idle()
        request = asked[0].request
        assert not request.pending and request.future.result().kind == "deny"
        assert not (tmp_path / "b.txt").exists()
        await session.aclose()
    finally:
        await window.aclose()
        await other.aclose()


async def test_a_question_is_held_by_the_copy_and_said_once(
    host: HostProcess, tmp_path: Path
) -> None:
    """A question in a batch twice (a snapshot's tail and its approvals): said once, held
    by the copy of the thread (the agents board reads it there) until it is answered."""
    client = await host.client("window")
    try:
        session = RemoteSession(client, folder=str(tmp_path), model="m1", source="worker")
        events: list[LoopEvent] = []
        session.subscribe(events.append)
        call = write_b()
        asked = approval_record(ToolCall(str(call.id), call.name, call.arguments), "", "worker")
        session.heard([asked, dict(asked)])
        said = [e for e in events if isinstance(e, ApprovalNeeded)]
        assert len(said) == 1 and session.thread.request("w1") is said[0].request
        said[0].request.deny("not now")
        await asyncio.sleep(0)  # the answer's callbacks run on the loop
        assert session.thread.request("w1") is None
    finally:
        await client.aclose()
