"""The thread model: a real session's turns become entries, a call's whole life is on
its entry, and a copy fed the numbered changes as JSON reads the same."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.approval import Approve, Deny
from melgui.core.protocol.events import (
    Done,
    ReasoningDelta,
    StreamError,
    TextDelta,
    ToolCall,
    ToolCalls,
    Usage,
)
from melgui.core.protocol.judgement import JudgedPart, JudgedRule, Judgement
from melgui.core.protocol.loop_events import MessageAdded, ToolCallFinished, ToolCallRequested
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.protocol.tooling import ToolOutcome
from melgui.core.rules.policy import FixedPolicy
from melgui.core.thread.changes import Change, EntriesReplaced, TextAppended
from melgui.core.thread.codec import (
    change_from_json,
    change_to_json,
    judgement_from_json,
    judgement_to_json,
    snapshot_from_json,
    snapshot_to_json,
)
from melgui.core.thread.entries import (
    AssistantEntry,
    BranchEntry,
    CallEntry,
    NoteEntry,
    PlanEntry,
    ReasoningEntry,
    UserEntry,
)
from melgui.core.thread.reducer import ThreadReducer
from melgui.core.thread.thread import SeqGap, Thread
from tests.fakes.agent_loops import AskingPolicy, call
from tests.fakes.replay import Leg, ReplayTransport
from tests.fakes.tools import RecordingTools


def make_session(legs: list[Leg], policy: Any = None, **kwargs: Any) -> AgentSession:
    tools = kwargs.pop("tools", None) or RecordingTools()
    return AgentSession(
        ReplayTransport(legs),
        tools,
        policy or FixedPolicy("all"),
        model="m",
        role="assistant",
        cwd="/p",
        **kwargs,
    )


class Copy:
    """A thread elsewhere: starts from the session's snapshot (as JSON) and applies
    each change as JSON, the way an attached window would."""

    def __init__(self, thread: Thread) -> None:
        wire = json.loads(json.dumps(snapshot_to_json(thread.snapshot())))
        self.thread = Thread.from_snapshot(snapshot_from_json(wire))
        self.heard: list[Change] = []
        thread.subscribe(self._hear)

    def _hear(self, change: Change) -> None:
        self.heard.append(change)
        self.thread.apply(change_from_json(json.loads(json.dumps(change_to_json(change)))))


def assert_same(a: Thread, b: Thread) -> None:
    assert b.seq == a.seq
    assert list(b.entries) == list(a.entries)
    assert b.state == a.state


async def run(session: AgentSession, text: str) -> None:
    session.submit(text)
    await asyncio.wait_for(session.wait_idle(), 5)


async def test_a_turn_becomes_entries_in_order_and_a_copy_reads_the_same() -> None:
    legs: list[Leg] = [
        [
            ReasoningDelta("let me "),
            ReasoningDelta("look"),
            TextDelta("Reading "),
            TextDelta("it."),
            ToolCalls((call("c1", "read_file", {"path": "a.py"}),), Usage(prompt_tokens=3)),
        ],
        [TextDelta("Done."), Done(Usage(prompt_tokens=5, completion_tokens=2))],
    ]
    session = make_session(legs, AskingPolicy({"read_file": "allow read_file"}))
    thread = session.thread
    copy = Copy(thread)
    await run(session, "read a.py")

    kinds = [entry.kind for entry in thread.entries]
    assert kinds == ["user", "reasoning", "assistant", "call", "assistant"]
    user, reasoning, said, called, answer = thread.entries
    assert isinstance(user, UserEntry) and user.text == "read a.py"
    assert isinstance(reasoning, ReasoningEntry) and reasoning.text == "let me look"
    assert isinstance(said, AssistantEntry) and said.text == "Reading it."
    assert not said.streaming and said.leg == 1
    assert isinstance(answer, AssistantEntry) and answer.text == "Done." and answer.leg == 2
    assert isinstance(called, CallEntry)
    assert called.phase == "ok" and called.arguments == {"path": "a.py"}
    assert called.decision == "auto:allow read_file"
    assert called.judgement is not None and called.judgement.source == "rule"
    assert called.result is not None and called.result.content.startswith("read_file ok")
    assert called.origin.kind == "main" and called.question is None
    assert thread.state.status == "idle" and thread.state.outcome == "done"
    assert thread.state.legs == 2 and thread.state.usage.prompt_tokens == 8
    # streamed text arrives as appended pieces, not whole entries each time
    assert sum(isinstance(c, TextAppended) for c in copy.heard) == 2
    assert_same(thread, copy.thread)
    await session.aclose()


async def test_a_waiting_call_holds_its_question_until_answered_through_the_thread() -> None:
    legs: list[Leg] = [
        [ToolCalls((call("w1", "write_file", {"path": "x", "content": "y"}),))],
        [ToolCalls((call("w2", "write_file", {"path": "z", "content": "y"}),))],
        [Done()],
    ]
    session = make_session(legs, AskingPolicy({}))
    thread = session.thread
    copy = Copy(thread)
    session.submit("write")
    for _ in range(100):
        await asyncio.sleep(0.01)
        if (entry := thread.call("w1")) is not None and entry.phase == "waiting":
            break
    entry = thread.call("w1")
    assert entry is not None and entry.phase == "waiting" and entry.question is not None
    assert entry.judgement is not None and entry.judgement.asks
    assert thread.request("w1") is not None
    assert copy.thread.request("w1") is None  # the answer channel stays with the loop
    thread.set_draft("w1", "not there")
    waiting = copy.thread.call("w1")
    assert waiting is not None and waiting.question is not None
    assert waiting.question.draft == "not there"
    request = thread.request("w1")
    assert request is not None and request.draft == "not there"
    thread.answer("w1", Approve("session"))
    for _ in range(100):
        await asyncio.sleep(0.01)
        if (second := thread.call("w2")) is not None and second.phase == "waiting":
            break
    first = thread.call("w1")
    assert first is not None and first.phase == "ok" and first.decision == "approved:session"
    assert first.question is None and thread.request("w1") is None
    thread.answer("w2", Deny("wrong file"))
    await asyncio.wait_for(session.wait_idle(), 5)
    second = thread.call("w2")
    assert second is not None and second.phase == "denied" and second.decision == "denied"
    assert second.result is not None and "Reason: wrong file." in second.result.content
    assert second.timing.waited > 0
    assert_same(thread, copy.thread)
    await session.aclose()


async def test_a_copy_hands_its_answer_to_the_host() -> None:
    answers: list[tuple[str, object]] = []
    copy = Thread.from_snapshot(
        Thread("t").snapshot(), on_answer=lambda call_id, d: answers.append((call_id, d))
    )
    copy.answer("c9", Approve())
    assert answers == [("c9", Approve())]


async def test_the_checkpoint_taken_around_a_call_is_on_its_entry() -> None:
    @contextlib.asynccontextmanager
    async def guard(call: ToolCall, source: str) -> AsyncIterator[int]:
        yield 41

    legs: list[Leg] = [[ToolCalls((call("k1", "write_file", {"path": "x"}),))], [Done()]]
    session = make_session(legs, around_call=guard)
    await run(session, "go")
    entry = session.thread.call("k1")
    assert entry is not None and entry.checkpoint == 41 and entry.phase == "ok"
    await session.aclose()


async def test_a_plan_a_failure_and_a_retry_are_entries() -> None:
    tools = RecordingTools()

    async def write_plan(arguments: dict[str, Any]) -> ToolOutcome:
        return ToolOutcome("saved")

    tools.register("write_plan", write_plan)
    plan = {"title": "Steps", "markdown": "1. read"}
    legs: list[Leg] = [
        [StreamError("busy", 503, retryable=True)],
        [ToolCalls((call("p1", "write_plan", plan),))],
        [StreamError("gone", 500)],
    ]
    session = make_session(legs, tools=tools)
    await run(session, "plan it")
    kinds = [(e.kind, getattr(e, "note", "")) for e in session.thread.entries]
    assert kinds == [
        ("user", ""),
        ("note", "retry"),
        ("assistant", ""),  # the leg that only called a tool: its message, with no text
        ("call", ""),
        ("plan", ""),
        ("note", "error"),
    ]
    plan_entry, failed = session.thread.entries[4], session.thread.entries[5]
    assert isinstance(plan_entry, PlanEntry) and plan_entry.title == "Steps"
    assert plan_entry.call_id == "p1"
    assert isinstance(failed, NoteEntry) and failed.status == 500 and failed.text == "gone"
    assert session.thread.state.outcome == "failed"
    await session.aclose()


async def test_a_branch_replaces_the_entries_and_keeps_the_calls_it_carries() -> None:
    legs: list[Leg] = [[ToolCalls((call("b1", "read_file", {"path": "a"}),))], [Done()]]
    session = make_session(legs)
    await run(session, "read")
    copy = Copy(session.thread)
    before = session.thread.call("b1")
    session.branch(session.conversation.messages[:3], "rewind", "went back")
    assert isinstance(copy.heard[-1], EntriesReplaced)
    kinds = [e.kind for e in session.thread.entries]
    assert kinds == ["user", "assistant", "call", "branch"]
    assert session.thread.call("b1") == before  # judgement, timing, result kept
    marker = session.thread.entries[-1]
    assert isinstance(marker, BranchEntry) and marker.note == "went back"
    assert marker.current == tuple(session.conversation.messages)  # the new list, whole
    assert_same(session.thread, copy.thread)
    await session.aclose()


async def test_a_stored_conversation_loads_as_entries() -> None:
    stored = [
        Message.user("hi"),
        Message.assistant("", (call("s1", "read_file", {"path": "a"}),), reasoning="hm"),
        Message.tool_result("s1", "denied it", "denied"),
        Message.assistant("ok"),
    ]
    session = make_session([], conversation=Conversation(list(stored)))
    kinds = [e.kind for e in session.thread.entries]
    assert kinds == ["user", "reasoning", "assistant", "call", "assistant"]
    entry = session.thread.call("s1")
    assert entry is not None and entry.phase == "denied" and entry.result is not None
    # Each message is held whole by its entry, as later legs send it.
    held = [
        m
        for e in session.thread.entries
        for m in (getattr(e, "message", None), getattr(e, "reply", None))
        if isinstance(m, Message)
    ]
    assert held == stored
    await session.aclose()


def test_a_result_is_held_by_its_call_whichever_comes_first() -> None:
    """The loop adds a call's result message just before saying the call finished; a
    hosted agent just after. Either way the call's entry holds it, once."""
    first = call("a1", "read_file", {"path": "a"})
    later = call("a2", "read_file", {"path": "b"})
    reducer = ThreadReducer(Thread())
    reducer.apply(MessageAdded(Message.assistant("", (first, later))))
    for each in (first, later):
        reducer.apply(ToolCallRequested(each))
    before = Message.tool_result("a1", "text of a")
    reducer.apply(MessageAdded(before))
    reducer.apply(ToolCallFinished(first, "ok", "text of a", 0.1))
    reducer.apply(ToolCallFinished(later, "ok", "text of b", 0.1))
    after = Message.tool_result("a2", "text of b")
    reducer.apply(MessageAdded(after))
    thread = reducer.thread
    one, two = thread.call("a1"), thread.call("a2")
    assert one is not None and one.reply is before
    assert two is not None and two.reply is after
    (answer,) = [e for e in thread.entries if isinstance(e, AssistantEntry)]
    assert answer.text == "" and answer.message is not None
    assert answer.message.tool_calls == (first, later)


def test_where_a_call_comes_from() -> None:
    origins = {"mcp__git__log": "mcp:git", "read_file": "melgui"}
    main = ThreadReducer(Thread(), tool_origin=origins.__getitem__)
    worker = ThreadReducer(Thread(), source="Worker 2", tool_origin=origins.__getitem__)
    agent = ThreadReducer(Thread(), source="Claude", agent="claude-code")
    assert (main.origin("read_file").kind, main.origin("read_file").name) == ("main", "")
    assert (main.origin("mcp__git__log").kind, main.origin("mcp__git__log").name) == (
        "mcp",
        "git",
    )
    assert worker.origin("read_file").kind == "worker"
    assert worker.origin("read_file").name == "Worker 2"
    assert worker.origin("mcp__git__log").source == "Worker 2"
    assert agent.origin("edit").kind == "acp" and agent.origin("edit").name == "claude-code"


def test_changes_are_numbered_and_a_gap_is_refused() -> None:
    thread = Thread(keep=3)
    for n in range(5):
        thread.add(NoteEntry(thread.new_id(), "context", f"note {n}"))
    assert thread.seq == 5
    assert [c.seq for c in thread.since(3) or []] == [4, 5]
    assert thread.since(5) == []
    assert thread.since(1) is None  # no longer all kept: take a snapshot
    copy = Thread.from_snapshot(thread.snapshot())
    change = thread.since(4)
    assert change is not None
    with pytest.raises(SeqGap):
        Thread("x").apply(change[0])
    assert copy.seq == 5 and list(copy.entries) == list(thread.entries)
    copy.add(NoteEntry(copy.new_id(), "context", "after"))
    assert len({e.id for e in copy.entries}) == 6  # ids go on after a snapshot's


def test_a_copy_restarts_from_a_snapshot_and_takes_merged_runs() -> None:
    thread = Thread("t1")
    index = thread.add(AssistantEntry(thread.new_id(), "", streaming=True, leg=1))
    copy = Thread()
    copy.add(NoteEntry(copy.new_id(), "context", "what it held before"))
    heard: list[str] = []
    copy.subscribe(lambda change: heard.append(change.kind))
    copy.restart(thread.snapshot())
    assert heard == ["entries_replaced"]  # the state is the same: not said again
    assert copy.thread_id == "t1" and copy.seq == 1 and list(copy.entries) == list(thread.entries)
    # What it held before does not chain with the snapshot: a reader is given the load.
    assert [c.kind for c in copy.since(0) or []] == ["entries_replaced"]
    for piece in ("He", "ll", "o"):
        thread.append_text(index, piece)
    merged = TextAppended(4, index, "Hello")  # the host sends a run as one change
    with pytest.raises(SeqGap):
        copy.apply(merged)  # without its first number it does not follow
    with pytest.raises(SeqGap):
        copy.apply(merged, first=3)
    copy.apply(merged, first=2)
    assert copy.seq == 4 and copy.entries[0].text == "Hello"  # type: ignore[union-attr]


def test_a_judgement_survives_json() -> None:
    rule = JudgedRule("allow run_command: ls", "project", "ls")
    judgement = Judgement(
        "ask",
        "",
        "rm is not covered",
        "ls && rm x",
        (
            JudgedPart("ls", 0, 2, "allow", "allow run_command: ls", rule),
            JudgedPart("rm x", 6, 10, "ask", ""),
        ),
        {"conversation": (rule,), "project": ()},
        learns=True,
        sandboxed=True,
    )
    wire = json.loads(json.dumps(judgement_to_json(judgement)))
    assert judgement_from_json(wire) == judgement


def test_a_listener_may_leave_out_the_streamed_pieces() -> None:
    """One that reads the streamed text when it wants it (the journal, on its timer) is
    not called once per token; the text is in the entries all the same."""
    thread = Thread()
    every: list[str] = []
    quiet: list[str] = []
    thread.subscribe(lambda change: every.append(change.kind))
    stop_quiet = thread.subscribe(lambda change: quiet.append(change.kind), text=False)
    index = thread.add(AssistantEntry(thread.new_id(), "", streaming=True, leg=1))
    for piece in ("He", "ll", "o"):
        thread.append_text(index, piece)
    assert every == ["entry_added", "text_appended", "text_appended", "text_appended"]
    assert quiet == ["entry_added"]
    assert thread.entries[index].text == "Hello"  # type: ignore[union-attr]
    stop_quiet()
    thread.add(NoteEntry(thread.new_id(), "context", "after"))
    assert quiet == ["entry_added"] and every[-1] == "entry_added"
