"""What a window's main conversation needs of the host (protocol 8), against the real host
process: who the session is for (`source`, kept for the next view), Retry and Edit
(`session/branch`), compaction (`turn/compact`), the role and plan mode
(`settings/update`), each seen by a second view as the new list of messages."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

from melgui.core.protocol.messages import Message
from melgui.host.remote_session import RemoteSession
from melgui.host.wire import RpcError
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.host_process import HostProcess


async def until(check: Callable[[], bool], timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


def relay_settings(relay: ScriptedRelay) -> dict[str, str]:
    return {"connection": "relay", "relay_url": relay.base_url}


def said(session: RemoteSession) -> list[tuple[str, str]]:
    return [(m.role, m.content or "") for m in session.conversation.messages]


async def test_the_main_conversation_is_said_as_such_and_its_history_is_cut_in_the_host(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([text("First."), done()], [text("Second."), done()])
    client, other = await host.client("window"), await host.client("other window")
    try:
        session = RemoteSession.start(
            client, folder=str(tmp_path), role="assistant", source="main",
            settings=relay_settings(scripted_relay),
        )  # fmt: skip
        session.submit("ask once")
        await until(lambda: not session.busy and len(session.conversation.messages) == 2)
        listed = await other.call("session/list")
        assert [(s["source"], s["role"], s["plan"]) for s in listed] == [
            ("main", "assistant", False)
        ]
        assert listed[0]["conversation"] == session.conversation_id != ""
        (watcher,) = await RemoteSession.reattach(other, listed)
        assert said(watcher) == [("user", "ask once"), ("assistant", "First.")]
        assert watcher.source == "main"

        # Retry: the host cuts its list, both views take the new one, the answer follows.
        session.branch(session.conversation.messages[:0], "retry", "retry of: ask once")
        assert said(session) == []
        session.submit("ask once")
        await until(lambda: not session.busy and len(session.conversation.messages) == 2)
        assert said(session) == [("user", "ask once"), ("assistant", "Second.")]
        await until(lambda: said(watcher) == said(session))

        # The role and plan mode go to the host and come back to the next view.
        session.loop.role = "orchestrator"
        session.loop.plan.on = True
        async with asyncio.timeout(30):
            while (listed[0]["role"], listed[0]["plan"]) != ("orchestrator", True):
                await asyncio.sleep(0.02)
                listed = await other.call("session/list")
        (again,) = await RemoteSession.reattach(other, listed)
        assert again.loop.plan.on and again.loop.role == "orchestrator"
        assert client.gaps == [] and other.gaps == []
        await session.aclose()
    finally:
        await client.aclose()
        await other.aclose()


async def test_a_list_that_is_not_a_beginning_is_sent_whole_and_a_cut_past_the_end_refused(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script([text("One."), done()])
    client = await host.client("window")
    try:
        session = RemoteSession.start(
            client, folder=str(tmp_path), source="main", settings=relay_settings(scripted_relay)
        )
        session.submit("one")
        await until(lambda: not session.busy and len(session.conversation.messages) == 2)
        edited = Message.from_json({**session.conversation.messages[1].to_json(),
                                    "content": "One, edited."})  # fmt: skip
        session.branch([session.conversation.messages[0], edited], "edit", "edited")
        snapshot: dict[str, Any] = {}
        async with asyncio.timeout(30):
            while [m.get("content") for m in snapshot.get("messages", [])] != [
                "one", "One, edited."
            ]:  # fmt: skip
                await asyncio.sleep(0.02)
                answer = await client.call("session/attach", sessions={session.session_id: None})
                snapshot = answer[session.session_id]["snapshot"]
        assert [m.content for m in session.conversation.messages] == ["one", "One, edited."]
        # The host refuses a cut past the end in plain words.
        try:
            await client.call("session/branch", session=session.session_id, keep=5, reason="edit")
        except RpcError as exc:
            assert "has 2 messages, not 5" in str(exc)
        else:
            raise AssertionError("a cut past the end was taken")
        await session.aclose()
    finally:
        await client.aclose()


async def test_a_compaction_runs_in_the_host_and_the_view_takes_its_new_list(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    long = "word " * 400
    scripted_relay.script(
        *[[text(f"Answer {n}. {long}"), done()] for n in range(4)],
        [text("Summary: four questions were answered."), done()],
    )
    client = await host.client("window")
    try:
        session = RemoteSession.start(
            client, folder=str(tmp_path), source="main", settings=relay_settings(scripted_relay)
        )
        for n in range(4):
            session.submit(f"question {n}")
        await until(lambda: not session.busy and len(session.conversation.messages) == 8)
        before = [m.to_json() for m in session.conversation.messages]
        session.request_compaction()
        assert session.busy
        await until(lambda: session.compaction.question is not None)  # the preview waits
        session.compaction.question.keep()  # type: ignore[union-attr]
        await until(lambda: not session.busy)
        after = [m.to_json() for m in session.conversation.messages]
        assert after != before
        assert any("four questions were answered" in (m.get("content") or "") for m in after)
        snapshot = (await client.attach({session.session_id: None}))[session.session_id]
        assert snapshot["snapshot"]["messages"] == after  # the host's list, the same
        await session.aclose()
    finally:
        await client.aclose()
