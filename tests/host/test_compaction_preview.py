"""The preview before a compaction of a main conversation in the host (protocol 13): a
question that waits in the host as approvals do, against the real host process. Every
view attached sees it; one answers it (`compaction/answer`) and it goes from the others;
a view that comes later finds it in its snapshot; Don't compact leaves the list as it is."""

from __future__ import annotations

import asyncio
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from melgui.core.protocol.views.compacted import KEPT_HEAD
from melgui.host.client import HostClient
from melgui.host.remote_session import RemoteSession
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.host_process import HostProcess, host_on_bus
from tests.fakes.session_bus import NotificationBus

LONG = "word " * 400


async def until(check: Callable[[], bool], timeout: float = 30) -> None:
    async with asyncio.timeout(timeout):
        while not check():
            await asyncio.sleep(0.02)


async def four_turns(client: HostClient, relay: ScriptedRelay, folder: Path) -> RemoteSession:
    """A main conversation of four long answers, ready to compact."""
    session = RemoteSession.start(
        client, folder=str(folder), source="main",
        settings={"connection": "relay", "relay_url": relay.base_url},
    )  # fmt: skip
    for n in range(4):
        session.submit(f"question {n}")
    await until(lambda: not session.busy and len(session.conversation.messages) == 8)
    return session


async def test_the_preview_waits_in_the_host_one_view_answers_and_it_goes_from_the_other(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(
        *[[text(f"Answer {n}. {LONG}"), done()] for n in range(4)],
        [text("Summary: four questions were answered."), done()],
    )
    client, other = await host.client("window"), await host.client("other window")
    try:
        session = await four_turns(client, scripted_relay, tmp_path)
        shown: list[object] = []
        session.compaction.on_question = shown.append
        session.request_compaction()
        await until(lambda: session.compaction.question is not None)
        question = session.compaction.question
        assert question is not None and shown == [question]
        assert question.proposed.mode == "manual" and question.proposed.summarise
        # The four older questions and answers, each an item the person may keep.
        first = [i.label.split()[:2] for i in question.items][:2]
        assert first == [["You:", "question"], ["Model:", "Answer"]]
        assert all(i.fate == "summarised" for i in question.items)
        assert question.cut_tokens > 0 and question.kept_tokens > 0
        assert len(scripted_relay.legs_received) == 4  # nothing summarised yet
        listed = await other.call("session/list")
        assert listed[0]["compaction"] is True and listed[0]["busy"] is True

        # A second view attaches: the question is in its snapshot, it answers, keeping one.
        (watcher,) = await RemoteSession.reattach(other, listed)
        theirs = watcher.compaction.question
        assert theirs is not None and [i.label for i in theirs.items] == [
            i.label for i in question.items
        ]
        theirs.keep([1])  # "Answer 0. word word…", kept word for word
        await until(lambda: not question.pending)  # gone from the first view, not answered there
        assert question.future.result() is None and session.compaction.question is None
        await until(lambda: not session.busy)
        summary = next(m.content for m in session.conversation.messages if KEPT_HEAD in m.content)
        assert "four questions were answered" in summary and "Answer 0." in summary
        assert len(scripted_relay.legs_received) == 5  # the summary's leg, after the answer
        assert client.gaps == [] and other.gaps == []
        await watcher.aclose()
        await session.aclose()
    finally:
        await client.aclose()
        await other.aclose()


async def test_a_view_that_left_finds_the_question_and_dont_compact_keeps_the_list(
    host: HostProcess, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(*[[text(f"Answer {n}. {LONG}"), done()] for n in range(4)])
    client = await host.client("window")
    session = await four_turns(client, scripted_relay, tmp_path)
    before = [m.to_json() for m in session.conversation.messages]
    session.request_compaction()
    await until(lambda: session.compaction.question is not None)
    session_id = session.session_id
    await client.aclose()  # the view goes with the question unanswered: it waits
    listed_running = subprocess.run(
        [sys.executable, "-m", "melgui", "--list-running"],
        env=host.env, capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert "[running, waiting for the preview before a compaction]" in listed_running.stdout
    assert "melgui FOLDER" in listed_running.stdout

    later = await host.client("next window")
    try:
        listed = await later.call("session/list")
        assert [s["compaction"] for s in listed if s["id"] == session_id] == [True]
        (again,) = await RemoteSession.reattach(later, listed)
        question = again.compaction.question
        assert question is not None and question.pending
        question.cancel()  # Don't compact
        await until(lambda: not again.busy)
        assert [m.to_json() for m in again.conversation.messages] == before
        # Said in the chat, and the host's question went: a late answer is refused.
        notes = [e.text for e in again.thread.entries if getattr(e, "kind", "") == "note"]
        assert any("Not compacted" in note for note in notes), notes
        answer = await later.call("compaction/answer", session=session_id, id="1.1", keep=[])
        assert answer == {"answered": False}
        assert len(scripted_relay.legs_received) == 4
        await again.aclose()
    finally:
        await later.aclose()


@pytest.mark.skipif(not NotificationBus.available(), reason="needs dbus-daemon")
async def test_a_preview_no_window_shows_is_said_on_the_desktop(
    scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    scripted_relay.script(*[[text(f"Answer {n}. {LONG}"), done()] for n in range(4)])
    with host_on_bus() as (host, bus):
        client = await host.client("window")
        session = await four_turns(client, scripted_relay, tmp_path)
        session.request_compaction()
        await until(lambda: session.compaction.question is not None)
        await asyncio.sleep(0.3)  # several frames: a window shows it, so none is sent
        assert bus.calls() == []
        await client.aclose()
        await until(lambda: bool(bus.calls()))
        await asyncio.sleep(0.3)
        [said] = bus.calls()  # once
        assert said["summary"] == "The main conversation waits before compacting"
        assert str(tmp_path) in said["body"]
