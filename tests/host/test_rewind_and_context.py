"""What a window's main conversation asks of the host beyond a worker's (protocol 10),
against the real host process: `session/rewind` plans (a file changed since is a
conflict, with its versions) and puts back from the host's checkpoints while cutting the
list in one step, refused for a message that moved or while a turn runs;
`context/measure` is the host's count; `context/pin` and `session/preface` reach the model."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path

import pytest

from melgui.host.client import HostGone
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from tests.fakes import ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess


async def until(check: Callable[[], bool], timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


def relay_settings(relay: ScriptedRelay) -> dict[str, str]:
    return {"connection": "relay", "relay_url": relay.base_url}


async def approve_all(session: RemoteSession) -> None:
    """Answer every question the session asks, as a person would on its card."""
    while True:
        for request in session.loop.pending_approvals():
            request.approve()
        await asyncio.sleep(0.02)


async def test_rewind_plans_then_puts_back_and_cuts_the_list_in_the_host(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    (tmp_path / "a.txt").write_text("as it was\n")
    write = tool_call("write_file", {"path": "a.txt", "content": "agent\n"}, id="w1")
    scripted_relay.script([tool_calls(write)], [text("Wrote it."), done()])
    client, other = await host.client("window"), await host.client("other window")
    session = RemoteSession.start(
        client, folder=str(tmp_path), source="main", settings=relay_settings(scripted_relay)
    )
    answering = asyncio.create_task(approve_all(session))
    try:
        session.submit("write a")
        await until(lambda: not session.busy and len(session.conversation.messages) == 4)
        assert (tmp_path / "a.txt").read_text() == "agent\n"
        (tmp_path / "a.txt").write_text("mine\n")  # changed since, by someone else

        planned = await session.ask("session/rewind", index=0, text="write a", plan_only=True)
        assert planned["files"] == ["a.txt"] and planned["conflicts"] == ["a.txt"]
        assert planned["versions"]["a.txt"] == {
            "before": "as it was\n", "agent": "agent\n", "now": "mine\n"
        }  # fmt: skip
        assert (tmp_path / "a.txt").read_text() == "mine\n"  # a plan touches nothing
        with pytest.raises(RpcError, match="that message moved"):
            await session.ask("session/rewind", index=0, text="something else", plan_only=True)
        with pytest.raises(RpcError, match="not a user message"):
            await session.ask("session/rewind", index=1, plan_only=True)

        done_ = await session.ask(
            "session/rewind", index=0, text="write a", choices={"a.txt": "before"},
            **{"continue": True},
        )  # fmt: skip
        assert done_["files"] == ["a.txt"] and done_["restored"] is not None
        assert (tmp_path / "a.txt").read_text() == "as it was\n"
        await until(lambda: session.conversation.messages == [])
        listed = await other.call("session/list")
        (watcher,) = await RemoteSession.reattach(other, listed)
        assert watcher.conversation.messages == []
        # The restore is a checkpoint of its own: Undo on it (redo) is the host's too.
        restored = await session.ask_folder(
            "checkpoint/restore", records=[done_["restored"]], plan_only=False
        )
        assert restored["files"] == ["a.txt"]
        assert (tmp_path / "a.txt").read_text() == "mine\n"
    finally:
        answering.cancel()
        await session.aclose()
        await client.aclose()
        await other.aclose()


async def test_a_rewind_that_would_cut_a_running_turn_is_refused_and_touches_nothing(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    gate = threading.Event()
    scripted_relay.script([text("First."), done()], [text("Sec"), hold(gate), text("ond."), done()])
    client = await host.client("window")
    session = RemoteSession.start(
        client, folder=str(tmp_path), source="main", settings=relay_settings(scripted_relay)
    )
    try:
        session.submit("one")
        await until(lambda: not session.busy and len(session.conversation.messages) == 2)
        session.submit("two")
        await until(lambda: session.busy and len(session.conversation.messages) == 3)
        planned = await session.ask("session/rewind", index=0, text="one", plan_only=True)
        assert planned["busy"] and planned["files"] == []
        with pytest.raises(RpcError, match="while a turn runs"):
            await session.ask("session/rewind", index=0, text="one", **{"continue": True})
        gate.set()
        await until(lambda: not session.busy and len(session.conversation.messages) == 4)
        assert [m.content for m in session.conversation.messages if m.role == "user"] == [
            "one", "two"
        ]  # fmt: skip
    finally:
        gate.set()
        await session.aclose()
        await client.aclose()


async def test_the_context_is_measured_and_pinned_in_the_host(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        [text("Hi."), done(usage={"prompt_tokens": 900, "completion_tokens": 20})],
        [text("Kept."), done()],
    )
    client = await host.client("window")
    session = RemoteSession.start(
        client, folder=str(tmp_path), source="main", settings=relay_settings(scripted_relay)
    )
    try:
        before = await session.ask("context/measure", breakdown=True)
        session.submit("hi")
        await until(lambda: not session.busy and len(session.conversation.messages) == 2)
        after = await session.ask("context/measure", breakdown=True)
        assert after["turn"]["total_tokens"] == 920 and after["reported"]
        assert not before["reported"] and before["total"]["total_tokens"] == 0
        assert after["calibrated"] and not before["calibrated"]  # on the server's count
        assert after["used"] > 0 and before["used"] > 0
        kinds = {kind for kind, *_ in after["breakdown"]["slices"]}
        assert {"tool", "message"} <= kinds
        assert after["breakdown"]["total"] == sum(t for _, _, t, *_ in after["breakdown"]["slices"])

        session.preface("[melgui] The person rejected your change to a.txt.")
        assert session.pin("  the API is v2 ")
        await until(lambda: [p.text for p in session.pins] == ["the API is v2"])
        assert not session.pin("the API is v2")  # pinned already: not sent again
        session.submit("go on")
        await until(lambda: not session.busy and len(session.conversation.messages) == 4)
        told = scripted_relay.legs_received[-1].last_user_text
        assert "the API is v2" in told and "rejected your change to a.txt" in told
        assert session.unpin("the API is v2")
        await until(lambda: session.pins == ())
        assert (await session.ask("context/unpin", text="the API is v2")) == {"unpinned": False}
    finally:
        await session.aclose()
        await client.aclose()


async def test_asking_of_a_session_the_host_could_not_open_says_why(
    host: HostProcess, tmp_path: Path
) -> None:
    client = await host.client("window")
    session = RemoteSession.start(client, folder=str(tmp_path / "gone"), source="main")
    try:
        async with asyncio.timeout(30):
            with pytest.raises(HostGone, match="could not open this session"):
                await session.ask("context/measure")
    finally:
        await session.aclose()
        await client.aclose()
