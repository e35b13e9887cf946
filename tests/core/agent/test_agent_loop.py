"""The agent loop against an in-memory transport that replays legs and records requests."""

from __future__ import annotations

import asyncio

import pytest

from melgui.core.agent.loop import AgentLoop, RetryPolicy
from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.catalog import tools_for_role
from melgui.core.protocol.events import Done, StreamError, TextDelta, ToolCalls, Usage
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    HistoryRepaired,
    LoopEvent,
    Retrying,
    ToolCallFinished,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
)
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.rules.policy import FixedPolicy, RulePolicy
from melgui.core.rules.rule_scopes import Rule, RuleBook
from tests.fakes.agent_loops import assert_valid, call, make_loop
from tests.fakes.replay import Leg, ReplayTransport
from tests.fakes.tools import RecordingTools


async def test_round_trip_two_calls_results_in_order() -> None:
    calls = (call("a", "read_file", {"path": "x"}), call("b", "list_dir", {}))
    loop, transport, tools, _ = make_loop(
        [
            [
                TextDelta("Let me look. "),
                ToolCalls(calls, Usage(prompt_tokens=10, completion_tokens=5)),
            ],
            [TextDelta("Done"), TextDelta("."), Done(Usage(prompt_tokens=20, completion_tokens=2))],
        ]
    )
    result = await loop.run_turn("hi")
    assert result.outcome == "done"
    assert [name for name, _ in tools.ran] == ["read_file", "list_dir"]
    second = transport.requests[1].messages
    assert second[0] == {"role": "user", "content": "hi"}
    assert second[1]["role"] == "assistant"
    assert [c["id"] for c in second[1]["tool_calls"]] == ["a", "b"]
    assert second[2]["tool_call_id"] == "a" and second[3]["tool_call_id"] == "b"
    assert second[2]["content"].startswith("read_file ok")
    assert loop.conversation.messages[-1] == Message.assistant("Done.")
    assert loop.legs == 2
    assert loop.usage.total_tokens == 37


async def test_malformed_and_unknown_calls_become_error_results() -> None:
    calls = (
        call("a", "read_file", '{"path": '),
        call("b", "open_pane", {"layout": "right"}),
        call("c", "read_file", "[1, 2]"),
        call("d", "list_dir", ""),
    )
    loop, _, tools, _ = make_loop([[ToolCalls(calls)], [Done()]])
    await loop.run_turn("go")
    results = {m.tool_call_id: m for m in loop.conversation.messages if m.role == "tool"}
    assert results["a"].status == "error" and "not valid JSON" in results["a"].content
    assert results["b"].status == "error" and "Unknown tool 'open_pane'" in results["b"].content
    assert results["c"].status == "error" and "JSON object" in results["c"].content
    assert results["d"].status == "ok"
    assert tools.ran == [("list_dir", {})]
    assert_valid(loop.conversation)


async def test_tool_exception_is_an_error_result_not_a_crash() -> None:
    loop, _, _, _ = make_loop([[ToolCalls((call("a", "read_file", {"explode": True}),))], [Done()]])
    assert (await loop.run_turn("go")).outcome == "done"
    result = loop.conversation.messages[2]
    assert result.status == "error" and "RuntimeError: boom" in result.content


async def test_denied_call_sends_reason_back() -> None:
    policy = RulePolicy()
    loop, transport, tools, events = make_loop(
        [[ToolCalls((call("a", "run_command", {"command": "rm -rf /"}),))], [Done()]], policy
    )

    def deny(event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            event.request.deny("too dangerous")

    loop._emit_fn = lambda e: (events.append(e), deny(e))  # type: ignore[func-returns-value]
    await loop.run_turn("clean up")
    assert tools.ran == []
    result = transport.requests[1].messages[2]
    assert result["tool_call_id"] == "a"
    assert "denied" in result["content"] and "too dangerous" in result["content"]


async def test_always_allow_remembers_for_session() -> None:
    policy = RulePolicy()
    legs: list[Leg] = [
        [ToolCalls((call("a", "write_file", {"path": "p", "content": "1"}),))],
        [ToolCalls((call("b", "write_file", {"path": "p", "content": "2"}),))],
        [Done()],
    ]
    loop, _, tools, events = make_loop(legs, policy)
    asked: list[ApprovalRequest] = []

    def approve(event: LoopEvent) -> None:
        events.append(event)
        if isinstance(event, ApprovalNeeded):
            asked.append(event.request)
            event.request.approve("session")

    loop._emit_fn = approve
    await loop.run_turn("write twice")
    assert len(asked) == 1
    assert len(tools.ran) == 2


async def test_retry_on_429_honours_retry_after_and_never_reruns_tools() -> None:
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)

    legs: list[Leg] = [
        [ToolCalls((call("a", "read_file", {"path": "x"}),))],
        [StreamError("slow down", status=429, retryable=True, retry_after=7.0)],
        [StreamError("bad gateway", status=502, retryable=True)],
        [Done()],
    ]
    loop, transport, tools, events = make_loop(legs, sleep=sleep)
    assert (await loop.run_turn("go")).outcome == "done"
    assert delays == [7.0, 2.0]
    assert len(tools.ran) == 1
    assert len(transport.requests) == 4
    assert sum(isinstance(e, Retrying) for e in events) == 2


async def test_retries_are_bounded_and_401_is_not_retried() -> None:
    legs: list[Leg] = [[StreamError("down", status=503, retryable=True)] for _ in range(10)]
    loop, transport, _, _ = make_loop(legs, retry=RetryPolicy(attempts=3))
    result = await loop.run_turn("go")
    assert result.outcome == "failed" and len(transport.requests) == 3

    loop, transport, _, events = make_loop([[StreamError("Invalid API key", status=401)]])
    result = await loop.run_turn("go")
    assert (result.outcome, result.status, len(transport.requests)) == ("failed", 401, 1)
    assert isinstance(events[-1], TurnFailed) and "Invalid API key" in events[-1].message


async def test_error_after_text_is_not_retried_and_text_is_kept() -> None:
    legs: list[Leg] = [[TextDelta("partial"), StreamError("cut", retryable=True, events_seen=True)]]
    loop, transport, _, _ = make_loop(legs)
    assert (await loop.run_turn("go")).outcome == "failed"
    assert len(transport.requests) == 1
    assert loop.conversation.messages[-1] == Message.assistant("partial")


async def test_stream_that_just_ends_is_a_failure() -> None:
    loop, _, _, _ = make_loop([[TextDelta("hal")]], retry=RetryPolicy(attempts=1))
    result = await loop.run_turn("go")
    assert result.outcome == "failed" and "ended before" in result.message


async def test_cancel_during_stream_keeps_text_and_validity() -> None:
    loop, _, _, events = make_loop([[TextDelta("hello "), 10.0, Done()]])
    task = asyncio.create_task(loop.run_turn("go"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert loop.conversation.messages[-1] == Message.assistant("hello ")
    assert isinstance(events[-1], TurnCancelled)
    assert_valid(loop.conversation)


async def test_cancel_during_tool_answers_every_call() -> None:
    calls = (
        call("a", "read_file", {"path": "x"}),
        call("b", "run_command", {"slow": True}),
        call("c", "read_file", {"path": "y"}),
    )
    loop, _, tools, events = make_loop([[ToolCalls(calls)], [Done()]])
    task = asyncio.create_task(loop.run_turn("go"))
    while len(tools.ran) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    statuses = [m.status for m in loop.conversation.messages if m.role == "tool"]
    assert statuses == ["ok", "cancelled", "cancelled"]
    finished = [e for e in events if isinstance(e, ToolCallFinished)]
    assert [e.call.id for e in finished] == ["a", "b", "c"]
    assert_valid(loop.conversation)


async def test_cancel_while_waiting_for_approval() -> None:
    loop, _, tools, _ = make_loop(
        [[ToolCalls((call("a", "write_file", {"path": "p", "content": ""}),))]], RulePolicy()
    )
    task = asyncio.create_task(loop.run_turn("go"))
    await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert tools.ran == []
    assert loop.conversation.messages[-1].status == "cancelled"
    assert_valid(loop.conversation)


async def test_role_decides_the_tools_sent_and_duplicate_ids_are_made_unique() -> None:
    calls = (call("same", "read_file", {"path": "a"}), call("same", "read_file", {"path": "b"}))
    loop, transport, _, _ = make_loop([[ToolCalls(calls)], [Done()]], role="worker")
    await loop.run_turn("go")
    assert transport.requests[0].tools == tools_for_role("worker")
    assert transport.requests[0].tool_role == "worker"
    ids = [m["tool_call_id"] for m in transport.requests[1].messages if m["role"] == "tool"]
    assert ids == ["same", "same_2"]
    assert [c["id"] for c in transport.requests[1].messages[1]["tool_calls"]] == ids


async def test_history_is_repaired_before_a_leg() -> None:
    conversation = Conversation(
        [
            Message.user("hi"),
            Message.assistant("", (call("x", "read_file", {"path": "a"}),)),
            Message.tool_result("orphan", "stray"),
        ]
    )
    transport = ReplayTransport([[Done()]])
    events: list[LoopEvent] = []
    loop = AgentLoop(
        transport,
        RecordingTools(),
        FixedPolicy("all"),
        conversation,
        model="m",
        role="assistant",
        cwd="/p",
        emit=events.append,
    )
    await loop.run_turn("again")
    repaired = [e for e in events if isinstance(e, HistoryRepaired)]
    assert repaired and repaired[0].repair.added_results == ("x",)
    assert repaired[0].repair.dropped_results == ("orphan",)
    sent = transport.requests[0].messages
    assert [m["role"] for m in sent] == ["user", "assistant", "tool", "user"]
    assert sent[2]["tool_call_id"] == "x"


async def test_a_server_asking_for_a_long_wait_is_capped() -> None:
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)

    legs: list[Leg] = [
        [StreamError("slow down", status=429, retryable=True, retry_after=86400.0)],
        [Done()],
    ]
    loop, _, _, events = make_loop(legs, sleep=sleep)
    assert (await loop.run_turn("go")).outcome == "done"
    assert delays == [RetryPolicy().max_retry_after] == [60.0]
    (retrying,) = [e for e in events if isinstance(e, Retrying)]
    assert retrying.delay == 60.0


async def test_a_model_that_never_stops_calling_tools_ends_at_the_leg_limit() -> None:
    legs: list[Leg] = [[ToolCalls((call(f"c{n}", "read_file", {"path": "x"}),))] for n in range(10)]
    loop, transport, tools, _ = make_loop(legs, max_legs_per_turn=3)
    result = await loop.run_turn("go")
    assert (result.outcome, result.message) == (
        "failed",
        "Stopped after 3 legs in one turn without a final answer.",
    )
    assert len(transport.requests) == 3 and len(tools.ran) == 3
    assert_valid(loop.conversation)


async def test_a_call_a_rule_lets_through_names_the_rule_and_one_a_rule_denies_never_runs() -> None:
    book = RuleBook(everywhere=[Rule.parse("allow run_command: ls"), Rule.parse("deny write_file")])
    legs: list[Leg] = [
        [ToolCalls((call("a", "run_command", {"command": "ls | ls"}),))],
        [ToolCalls((call("b", "write_file", {"path": "p", "content": "x"}),))],
        [Done()],
    ]
    loop, _, tools, events = make_loop(legs, RulePolicy(book=book, project="/project"))
    await loop.run_turn("look")
    started = [e for e in events if isinstance(e, ToolCallStarted)]
    assert [(e.call.id, e.allowed_by) for e in started] == [
        ("a", "allow run_command: ls (everywhere)")
    ]
    assert [name for name, _ in tools.ran] == ["run_command"]
    assert not any(isinstance(e, ApprovalNeeded) for e in events)
    denied = loop.conversation.messages[-2]
    assert denied.status == "denied" and "deny write_file" in denied.content
