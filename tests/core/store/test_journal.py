"""The Journal writes a live session to the store: at once for discrete events, batched
for streaming text and the wire log, and never in the loop's way."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Sequence
from pathlib import Path

import pytest

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.events import (
    Done,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCalls,
    WireEntry,
)
from melgui.core.protocol.loop_events import ApprovalNeeded, LoopEvent, TurnFinished
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.store import Store, open_store, wire_log
from melgui.core.store.journal import WIRE_CHUNK, Journal
from melgui.core.thread.codec import (
    change_from_json,
    change_to_json,
    snapshot_from_json,
    snapshot_to_json,
)
from melgui.core.thread.entries import AssistantEntry
from melgui.core.thread.thread import Thread
from tests.fakes.replay import AskWrites, Leg, ReplayTransport, Tools, call


def start(
    store: Store,
    folder: Path,
    legs: list[Leg],
    conversation: Conversation | None = None,
    flush_interval: float = 0.5,
) -> tuple[AgentSession, Journal, str, ReplayTransport]:
    cid = store.create_conversation(str(folder), model="m", role="assistant")
    transport = ReplayTransport(legs)
    journal = Journal(store, cid, conversation, flush_interval=flush_interval)
    session = AgentSession(
        transport,
        Tools(),
        AskWrites(),
        conversation,
        model="m",
        role="assistant",
        cwd=str(folder),
        wire=journal.record_wire,
    )
    journal.attach(session)
    return session, journal, cid, transport


def answer_approvals(session: AgentSession, *, deny: set[str]) -> None:
    def observer(event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            request: ApprovalRequest = event.request
            if request.call.id in deny:
                request.deny("not now")
            else:
                request.approve("session")

    session.subscribe(observer)


async def wait_for(condition: object, timeout: float = 5.0) -> None:
    assert callable(condition)
    deadline = asyncio.get_running_loop().time() + timeout
    while not condition():
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.01)


async def test_a_turn_is_stored_as_it_happens(store: Store, tmp_path: Path) -> None:
    plan = call("p1", "write_plan", {"title": "Steps", "markdown": "1. read\n2. write"})
    calls = (
        call("r1", "read_file", {"path": "a.txt"}),
        call("w1", "write_file", {"path": "b.txt", "content": "x"}),
        call("w2", "write_file", {"path": "c.txt", "content": "y"}),
        plan,
    )
    legs: list[Leg] = [
        [TextDelta("Let me "), TextDelta("look."), ToolCalls(calls)],
        [TextDelta("All done."), Done()],
    ]
    session, journal, cid, _ = start(store, tmp_path, legs)
    answer_approvals(session, deny={"w2"})
    session.submit("Please tidy up")
    await session.wait_idle()
    journal.close()

    stored = store.messages(cid)
    assert [s.message for s in stored] == session.conversation.messages
    assert not any(s.partial for s in stored)
    records = {r.call_id: r for r in store.calls.of(cid)}
    assert {k: (r.state, r.decision, r.result_status) for k, r in records.items()} == {
        "r1": ("ok", "auto", "ok"),
        "w1": ("ok", "approved:session", "ok"),
        "w2": ("denied", "denied", "denied"),
        "p1": ("ok", "auto", "ok"),
    }
    assert records["w1"].result == 'write_file: {"content": "x", "path": "b.txt"}'
    assert records["w1"].duration is not None
    assert [(p.title, p.markdown, p.call_id) for p in store.plans(cid)] == [
        ("Steps", "1. read\n2. write", "p1")
    ]
    wire = store.wire.read(cid)
    assert [w.leg for w in wire if w.direction == "request"] == [1, 2]
    assert len(wire) == 2 + 3 + 2  # two requests, three events then two
    summary = store.summary(cid)
    assert summary is not None and summary.title == "Please tidy up"


async def test_streamed_text_is_on_disk_within_the_interval_even_when_the_stream_stalls(
    store: Store, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    legs: list[Leg] = [[TextDelta("Hello, "), TextDelta("world"), gate, TextDelta("!"), Done()]]
    session, _journal, cid, _ = start(store, tmp_path, legs, flush_interval=0.05)
    session.submit("hi")

    def partial_row() -> bool:
        rows = store.messages(cid)
        return len(rows) == 2 and rows[1].partial and rows[1].message.content == "Hello, world"

    await wait_for(partial_row)  # the stream is stalled on the gate: the timer wrote it
    gate.set()
    await session.wait_idle()
    rows = store.messages(cid)
    assert [(r.message.content, r.partial) for r in rows] == [
        ("hi", False),
        ("Hello, world!", False),
    ]


async def test_tokens_are_batched_not_written_one_by_one(store: Store, tmp_path: Path) -> None:
    tokens: Leg = [TextDelta(f"t{i} ") for i in range(2000)]
    session, journal, cid, _ = start(store, tmp_path, [[*tokens, Done()]], flush_interval=60.0)
    session.submit("count")
    await session.wait_idle()
    assert journal.flushes <= 1
    assert store.messages(cid)[1].message.content.count("t") == 2000


async def test_stop_mid_stream_keeps_the_text_and_a_valid_history(
    store: Store, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    session, _journal, cid, _ = start(
        store, tmp_path, [[TextDelta("partial answer"), gate, Done()]], flush_interval=0.01
    )
    session.submit("go")
    await wait_for(lambda: len(store.messages(cid)) == 2)
    session.stop()
    await session.wait_idle()
    rows = store.messages(cid)
    assert [(r.message.content, r.partial) for r in rows] == [
        ("go", False),
        ("partial answer", False),
    ]


async def test_stop_during_a_tool_answers_the_call(store: Store, tmp_path: Path) -> None:
    calls = (call("r1", "read_file", {"path": "a", "wait": True}), call("r2", "read_file", {}))
    session, _journal, cid, _ = start(store, tmp_path, [[ToolCalls(calls)]])
    tools = session.loop.tools
    assert isinstance(tools, Tools)
    session.submit("go")
    await wait_for(lambda: any(r.state == "running" for r in store.calls.of(cid)))
    session.stop()
    await session.wait_idle()
    assert [s.message for s in store.messages(cid)] == session.conversation.messages
    assert [(r.call_id, r.result_status) for r in store.calls.of(cid)] == [
        ("r1", "cancelled"),
        ("r2", "cancelled"),
    ]


async def test_a_repair_before_a_leg_is_stored_with_a_note(store: Store, tmp_path: Path) -> None:
    broken = Conversation(
        [
            Message.user("earlier"),
            Message.assistant("", (call("lost", "read_file", {"path": "x"}),)),
            Message.tool_result("stray", "orphan"),
        ]
    )
    session, _journal, cid, transport = start(store, tmp_path, [[TextDelta("ok"), Done()]], broken)
    assert [s.message for s in store.messages(cid)] == broken.messages  # written on start
    session.submit("again")
    await session.wait_idle()
    assert [s.message for s in store.messages(cid)] == session.conversation.messages
    assert session.conversation.messages[2].status == "interrupted"
    (note,) = store.notes(cid)
    assert note.kind == "repair" and "interrupted" in note.text
    assert transport.requests[0].messages[2]["tool_call_id"] == "lost"


async def test_storage_failure_is_reported_once_and_the_turn_goes_on(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "data")
    problems: list[str] = []
    cid = store.create_conversation(str(tmp_path))
    journal = Journal(store, cid, on_problem=problems.append)
    session = AgentSession(
        ReplayTransport([[TextDelta("fine"), Done()]]),
        Tools(),
        AskWrites(),
        model="m",
        role="assistant",
        cwd=str(tmp_path),
    )
    events: list[LoopEvent] = []
    journal.attach(session)
    session.subscribe(events.append)
    store.close()  # every write now fails
    session.submit("hello")
    await session.wait_idle()
    assert isinstance(events[-1], TurnFinished)
    assert len(problems) == 1 and problems[0].startswith("History not saved:")
    assert journal.problem is not None


async def test_a_write_that_fails_on_the_writer_thread_is_said_while_the_turn_runs(
    tmp_path: Path,
) -> None:
    """The stream stalls after its first piece: the timer hands the wire lines over, their
    write fails on the writer thread, and that is said at once, not at the turn's end."""
    store = open_store(tmp_path / "data")
    problems: list[str] = []
    cid = store.create_conversation(str(tmp_path))
    journal = Journal(store, cid, flush_interval=0.01, on_problem=problems.append)
    gate = asyncio.Event()
    session = AgentSession(
        ReplayTransport([[TextDelta("half"), gate, TextDelta(" done"), Done()]]),
        Tools(),
        AskWrites(),
        model="m",
        role="assistant",
        cwd=str(tmp_path),
        wire=journal.record_wire,
    )
    journal.attach(session)
    store._conn.execute("DROP TABLE wire_chunks")  # only the wire log's writes fail
    session.submit("hello")
    await wait_for(lambda: problems)
    assert session.busy and "wire_chunks" in problems[0]
    gate.set()
    await session.wait_idle()
    assert [s.message.content for s in store.messages(cid)] == ["hello", "half done"]
    journal.close()
    assert len(problems) == 1


async def test_long_wire_logs_are_written_in_chunks_in_order(store: Store, tmp_path: Path) -> None:
    count = 2 * WIRE_CHUNK + 500
    tokens: Leg = [TextDelta(f"t{i} ") for i in range(count)]
    session, _journal, cid, _ = start(store, tmp_path, [[*tokens, Done()]], flush_interval=60.0)
    session.submit("long")
    await session.wait_idle()
    wire = store.wire.read(cid)
    assert len(wire) == 1 + count + 1  # the request, then every event
    chunks = store._conn.execute("SELECT count(*) FROM wire_chunks").fetchone()[0]
    assert chunks >= 3  # never one huge write at the end of the leg


async def test_reasoning_is_journaled_while_it_streams_and_with_the_answer(
    store: Store, tmp_path: Path
) -> None:
    gate = asyncio.Event()
    leg = [ReasoningDelta("weighing "), ReasoningDelta("options"), gate, TextDelta("B."), Done()]
    session, _journal, cid, _ = start(store, tmp_path, [leg], flush_interval=0.01)
    session.submit("A or B?")
    await wait_for(lambda: len(store.messages(cid)) == 2)
    partial = store.messages(cid)[1]
    assert partial.partial and partial.message.reasoning == "weighing options"
    gate.set()
    await session.wait_idle()
    final = store.messages(cid)[1]
    assert not final.partial
    assert (final.message.content, final.message.reasoning) == ("B.", "weighing options")


async def test_the_thread_alone_is_enough_to_record_a_conversation(
    store: Store, tmp_path: Path
) -> None:
    """A journal that hears nothing but a copy of the session's thread, its changes sent
    as JSON the way a host sends them, stores the very conversation the loop keeps: the
    messages come whole from the thread (answers with their calls, the calls' results),
    a branch's new list too; no loop event is needed."""
    calls = (call("r1", "read_file", {"path": "a.txt"}), call("w1", "write_file", {"path": "b"}))
    legs: list[Leg] = [
        [ReasoningDelta("Look first."), ToolCalls(calls)],  # no text: calls only
        [TextDelta("Read it; "), TextDelta("not writing."), Done()],
        [TextDelta("Again."), Done()],
    ]
    cid = store.create_conversation(str(tmp_path), model="m", role="assistant")
    session = AgentSession(
        ReplayTransport(legs), Tools(), AskWrites(), model="m", role="assistant", cwd=str(tmp_path)
    )
    answer_approvals(session, deny={"w1"})
    copy = Thread.from_snapshot(snapshot_from_json(snapshot_to_json(session.thread.snapshot())))
    session.thread.subscribe(
        lambda change: copy.apply(change_from_json(json.loads(json.dumps(change_to_json(change)))))
    )
    journal = Journal(store, cid)
    journal.follow(copy)
    session.submit("Tidy up")
    await session.wait_idle()
    assert [s.message for s in store.messages(cid)] == session.conversation.messages
    assert [m.role for m in session.conversation.messages] == [
        "user", "assistant", "tool", "tool", "assistant"
    ]  # fmt: skip
    assert {r.call_id: r.state for r in store.calls.of(cid)} == {"r1": "ok", "w1": "denied"}

    kept = session.conversation.messages[:1]
    session.branch(kept, "rewind", "back to the start")
    session.submit("Once more")
    await session.wait_idle()
    journal.close()
    assert [s.message for s in store.messages(cid)] == session.conversation.messages
    (branch,) = store.branches(cid)
    assert branch.reason == "rewind" and branch.messages == 5


async def test_a_stream_cut_by_an_error_keeps_its_text_after_the_turn(
    store: Store, tmp_path: Path
) -> None:
    """The journal reads the streamed text from the thread: once the turn has ended on
    an error, what was streamed stays stored, and closing the journal leaves it so."""
    gate = asyncio.Event()
    leg: Leg = [TextDelta("half an "), TextDelta("answer"), gate, StreamError("cut off")]
    session, journal, cid, _ = start(store, tmp_path, [leg], flush_interval=0.01)
    session.submit("go")
    await wait_for(lambda: len(store.messages(cid)) == 2)
    gate.set()
    await session.wait_idle()
    journal.close()
    rows = store.messages(cid)
    assert [r.message.content for r in rows] == ["go", "half an answer"]
    assert [n.kind for n in store.notes(cid)] == ["error"]


async def test_a_turn_s_end_waits_on_its_messages_not_on_its_wire_log(
    store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The wire log's encoding is held on the writer thread: the turn ends all the same
    (a turn end that waited on it would only go on once the hold timed out), with its
    messages stored; the wire lines follow, all of them."""
    release, held_out = threading.Event(), threading.Event()
    encode = wire_log.encode_chunk

    def held_encode(entries: Sequence[WireEntry]) -> str:
        if not release.wait(timeout=10):
            held_out.set()
        return encode(entries)

    monkeypatch.setattr(wire_log, "encode_chunk", held_encode)
    tokens: Leg = [TextDelta(f"t{i} ") for i in range(50)]
    session, journal, cid, _ = start(store, tmp_path, [[*tokens, Done()]], flush_interval=60.0)
    session.submit("count")
    await session.wait_idle()
    assert not held_out.is_set()
    assert store.behind is not None
    messages = store.behind.submit(
        lambda: store._conn.execute(
            "SELECT role, partial FROM messages WHERE conversation_id = ? ORDER BY seq", (cid,)
        ).fetchall()
    )  # read after the held write, once it is released: what the turn's end left
    release.set()
    assert messages.result(timeout=20) == [("user", 0), ("assistant", 0)]
    journal.close()
    assert len(store.wire.read(cid)) == 1 + 50 + 1  # the request, every event, the end


async def test_full_wire_chunks_wait_for_the_flush_and_are_written_in_it(
    store: Store, tmp_path: Path
) -> None:
    """Lines past `WIRE_CHUNK` are cut into chunks while the stream runs, but handed to
    the writer with the flush (the interval's, or the leg's end): a stream shorter than
    the interval encodes no wire log while it streams. Its end writes them all, in
    bounded chunks, in order."""
    count = 2 * WIRE_CHUNK + 500
    gate = asyncio.Event()
    tokens: Leg = [TextDelta(f"t{i} ") for i in range(count)]
    session, journal, cid, _ = start(
        store, tmp_path, [[*tokens, gate, Done()]], flush_interval=60.0
    )
    session.submit("long")

    def streamed() -> bool:
        entries = session.thread.entries
        last = entries[-1] if entries else None
        return isinstance(last, AssistantEntry) and last.text.count("t") == count

    await wait_for(streamed)  # stalled on the gate, every token in
    assert store.wire.read(cid) == []  # a read waits for what was handed over: nothing
    gate.set()
    await session.wait_idle()
    journal.close()
    wire = store.wire.read(cid)
    assert [w.direction for w in wire] == ["request"] + ["event"] * (count + 1)
    chunks = store._conn.execute("SELECT count(*) FROM wire_chunks").fetchone()[0]
    assert chunks >= 3


async def test_full_wire_chunks_are_on_disk_within_the_interval_while_the_stream_stalls(
    store: Store, tmp_path: Path
) -> None:
    count = WIRE_CHUNK + 10
    gate = asyncio.Event()
    tokens: Leg = [TextDelta(f"t{i} ") for i in range(count)]
    session, _journal, cid, _ = start(
        store, tmp_path, [[*tokens, gate, Done()]], flush_interval=0.05
    )
    session.submit("long")
    await wait_for(lambda: len(store.wire.read(cid)) == 1 + count)  # the request, the events
    gate.set()
    await session.wait_idle()
