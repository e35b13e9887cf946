"""What the agent loop promises its observers (the window, the journal, `melgui exec
--json`): every event of a turn, field by field, and what each leg asks the transport."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

import melgui.core.agent.loop as loop_module
from melgui.core.agent.loop import (
    CANCELLED_RESULT,
    SKIPPED_RESULT,
    YIELD_EVERY,
    AgentLoop,
    RetryPolicy,
)
from melgui.core.protocol.approval import Approve
from melgui.core.protocol.catalog import tools_for_role
from melgui.core.protocol.events import (
    Done,
    StreamError,
    StreamEvent,
    TextDelta,
    ToolCalls,
    Usage,
    WireEntry,
)
from melgui.core.protocol.judgement import ASK, allowed
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    AssistantText,
    LegFinished,
    LegStarted,
    LoopEvent,
    MessageAdded,
    Retrying,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
    TurnCancelled,
    TurnFailed,
    TurnFinished,
)
from melgui.core.protocol.messages import Message
from melgui.core.protocol.tooling import ResultPart
from melgui.core.protocol.transport import LegRequest, WireSink
from tests.fakes.agent_loops import AskingPolicy, assert_valid, call, make_loop
from tests.fakes.clocks import FakeClock
from tests.fakes.replay import Leg, ReplayTransport
from tests.fakes.tools import RecordingTools


@pytest.fixture
def clock(monkeypatch: pytest.MonkeyPatch) -> FakeClock:
    """The loop's monotonic clock, frozen at 100 s unless a tool or the test moves it."""
    fake = FakeClock()
    monkeypatch.setattr(loop_module, "time", fake)
    return fake


async def test_a_turn_with_a_retry_two_calls_and_an_approval_tells_observers_everything(
    clock: FakeClock,
) -> None:
    read = {"path": "a.txt", "takes": 2.5, "image": "aGk="}
    write = {"path": "b.txt", "content": "x"}
    legs: list[Leg] = [
        [StreamError("overloaded", status=503, retryable=True)],
        [
            TextDelta("Looking. "),
            ToolCalls(
                (call("", "read_file", read), call("", "write_file", write)),
                Usage(prompt_tokens=10, completion_tokens=5),
            ),
        ],
        [TextDelta("Done."), Done(Usage(prompt_tokens=20, completion_tokens=2))],
    ]
    delays: list[float] = []

    async def sleep(delay: float) -> None:
        delays.append(delay)

    def person(event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            event.request.approve()

    policy = AskingPolicy({"read_file": "allow read_file (everywhere)"})
    wire: list[WireEntry] = []
    loop, transport, tools, events = make_loop(
        legs,
        policy,
        tools=RecordingTools(clock),
        model="big-model",
        source="pane 2",
        wire=wire.append,
        sleep=sleep,
        on_event=person,
    )
    loop.tool_choice = "required"

    result = await loop.run_turn("go")

    assert (result.outcome, result.message, result.status) == ("done", "", None)
    first, second = call("call", "read_file", read), call("call_2", "write_file", write)
    read_result = 'read_file ok {"image": "aGk=", "path": "a.txt", "takes": 2.5}'
    write_result = 'write_file ok {"content": "x", "path": "b.txt"}'
    image = ResultPart("image", data="aGk=", mime_type="image/png")
    (asked,) = [e.request for e in events if isinstance(e, ApprovalNeeded)]
    rule = allowed("rule", "allow read_file (everywhere)")
    assert events == [
        MessageAdded(Message.user("go")),
        LegStarted(1, 1),
        Retrying(1, 1.0, "overloaded"),
        LegStarted(1, 2),
        AssistantText("Looking. "),
        LegFinished(1, Usage(prompt_tokens=10, completion_tokens=5)),
        MessageAdded(Message.assistant("Looking. ", (first, second))),
        ToolCallRequested(first),
        ToolCallRequested(second),
        ToolCallStarted(first, "allow read_file (everywhere)", rule),
        MessageAdded(Message.tool_result("call", read_result, "ok")),
        ToolCallFinished(first, "ok", read_result, 2.5, (image,), judgement=rule),
        ApprovalNeeded(asked),
        ToolCallStarted(second, "", ASK),
        MessageAdded(Message.tool_result("call_2", write_result, "ok")),
        ToolCallFinished(second, "ok", write_result, 0.0, (), judgement=ASK),
        LegStarted(2, 1),
        AssistantText("Done."),
        LegFinished(2, Usage(prompt_tokens=20, completion_tokens=2)),
        MessageAdded(Message.assistant("Done.")),
        TurnFinished(2, Usage(prompt_tokens=30, completion_tokens=7)),
    ]
    assert (loop.legs, loop.usage.total_tokens) == (2, 37)
    assert delays == [1.0]
    # The approval view shows where the question comes from and the policy's judgement.
    assert (asked.call, asked.arguments, asked.source, asked.judgement) == (
        second,
        write,
        "pane 2",
        ASK,
    )
    assert policy.recorded == [(second, ASK, Approve("once"))]
    assert tools.ran == [("read_file", read), ("write_file", write)]

    # Every leg asks the same model, folder, tools and tool choice; the wire log gets it all.
    assert [
        (r.model, r.cwd, r.tool_choice, r.tool_role, r.tools, len(r.messages))
        for r in transport.requests
    ] == [
        ("big-model", "/project", "required", "assistant", tools_for_role("assistant"), 1),
        ("big-model", "/project", "required", "assistant", tools_for_role("assistant"), 1),
        ("big-model", "/project", "required", "assistant", tools_for_role("assistant"), 4),
    ]
    assert [(w.direction, w.text) for w in wire] == [
        ("request", '{"messages": 1}'),
        ("event", "error"),
        ("request", '{"messages": 1}'),
        ("event", "text"),
        ("event", "tool_calls"),
        ("request", '{"messages": 4}'),
        ("event", "text"),
        ("event", "done"),
    ]


async def test_a_leg_without_usage_counts_the_leg_and_keeps_the_turn_usage() -> None:
    legs: list[Leg] = [
        [ToolCalls((call("a", "list_dir", {}),), Usage(prompt_tokens=3, completion_tokens=1))],
        [Done()],
    ]
    loop, _, _, events = make_loop(legs)
    await loop.run_turn("go")
    assert [e for e in events if isinstance(e, LegFinished | TurnFinished)] == [
        LegFinished(1, Usage(prompt_tokens=3, completion_tokens=1)),
        LegFinished(2, None),
        TurnFinished(2, Usage(prompt_tokens=3, completion_tokens=1)),
    ]


async def test_legs_are_numbered_over_the_loops_lifetime() -> None:
    loop, _, _, events = make_loop([[Done()], [Done()]])
    await loop.run_turn("one")
    await loop.run_turn("two")
    assert [e for e in events if isinstance(e, LegStarted | TurnFinished)] == [
        LegStarted(1, 1),
        TurnFinished(1, Usage()),
        LegStarted(2, 1),
        TurnFinished(2, Usage()),
    ]


async def test_a_refused_leg_fails_the_turn_with_the_servers_status() -> None:
    loop, _, _, events = make_loop([[StreamError("Invalid API key", status=401)]])
    result = await loop.run_turn("go")
    assert (result.outcome, result.message, result.status) == ("failed", "Invalid API key", 401)
    assert events[-2:] == [LegStarted(1, 1), TurnFailed("Invalid API key", 401)]


async def test_retries_count_their_attempts_and_give_up_with_the_last_error() -> None:
    legs: list[Leg] = [
        [StreamError("busy", status=503, retryable=True)],
        [StreamError("still busy", status=503, retryable=True)],
        [StreamError("gave up", status=503, retryable=True)],
    ]
    loop, _, _, events = make_loop(legs, retry=RetryPolicy(attempts=3))
    assert (await loop.run_turn("go")).status == 503
    assert events[1:] == [
        LegStarted(1, 1),
        Retrying(1, 1.0, "busy"),
        LegStarted(1, 2),
        Retrying(2, 2.0, "still busy"),
        LegStarted(1, 3),
        TurnFailed("gave up", 503),
    ]


def test_backoff_doubles_up_to_its_cap_and_a_servers_wait_is_kept_within_bounds() -> None:
    policy = RetryPolicy()
    assert [policy.delay(n, None) for n in range(1, 8)] == [1.0, 2.0, 4.0, 8.0, 16.0, 30.0, 30.0]
    slow = RetryPolicy(base_delay=0.5, max_delay=3.0)
    assert [slow.delay(n, None) for n in range(1, 5)] == [0.5, 1.0, 2.0, 3.0]
    # A Retry-After wins over the backoff, is never negative and never more than the cap.
    assert [policy.delay(3, wait) for wait in (0.0, -5.0, 0.25, 7.0, 60.0, 61.0)] == [
        0.0,
        0.0,
        0.25,
        7.0,
        60.0,
        60.0,
    ]
    assert RetryPolicy(max_retry_after=10.0).delay(1, 30.0) == 10.0


async def test_a_cancel_mid_tool_finishes_the_running_call_and_skips_the_rest(
    clock: FakeClock,
) -> None:
    calls = (
        call("a", "read_file", {"path": "x"}),
        call("b", "run_command", {"slow": True}),
        call("c", "read_file", {"path": "y"}),
    )
    loop, _, tools, events = make_loop([[ToolCalls(calls)], [Done()]])
    task = asyncio.create_task(loop.run_turn("go"))
    while len(tools.ran) < 2:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    finished = [
        (e.call.id, e.status, e.content, e.duration)
        for e in events
        if isinstance(e, ToolCallFinished)
    ]
    assert finished == [
        ("a", "ok", 'read_file ok {"path": "x"}', 0.0),
        ("b", "cancelled", CANCELLED_RESULT, 0.0),
        ("c", "cancelled", SKIPPED_RESULT, 0.0),
    ]
    assert events[-1] == TurnCancelled()
    assert [(m.tool_call_id, m.status) for m in loop.conversation.messages if m.role == "tool"] == [
        ("a", "ok"),
        ("b", "cancelled"),
        ("c", "cancelled"),
    ]
    assert_valid(loop.conversation)


async def test_a_cancel_while_a_person_decides_answers_the_call_as_cancelled() -> None:
    legs: list[Leg] = [[ToolCalls((call("a", "write_file", {"path": "p", "content": ""}),))]]
    loop, _, tools, events = make_loop(legs, AskingPolicy({}))
    task = asyncio.create_task(loop.run_turn("go"))
    while not loop.pending_approvals():
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (finished.status, finished.content) == ("cancelled", CANCELLED_RESULT)
    assert loop.pending_approvals() == [] and tools.ran == []


async def test_pending_approvals_is_a_copy_of_what_waits() -> None:
    legs: list[Leg] = [
        [ToolCalls((call("a", "write_file", {"path": "p", "content": ""}),))],
        [Done()],
    ]
    policy = AskingPolicy({})
    loop, _, tools, _ = make_loop(legs, policy)
    task = asyncio.create_task(loop.run_turn("go"))
    while not loop.pending_approvals():
        await asyncio.sleep(0)
    (request,) = loop.pending_approvals()
    loop.pending_approvals().clear()
    assert loop.pending_approvals() == [request]
    request.approve("session")
    assert (await task).outcome == "done"
    assert loop.pending_approvals() == []
    assert policy.recorded == [(request.call, request.judgement, Approve("session"))]
    assert tools.ran == [("write_file", {"path": "p", "content": ""})]


async def test_calls_without_ids_or_with_repeated_ids_get_distinct_ones() -> None:
    calls = (
        call("", "list_dir", {}),
        call("", "list_dir", {}),
        call("x", "list_dir", {}),
        call("x", "list_dir", {}),
        call("x_2", "list_dir", {}),
        call("", "list_dir", {}),
    )
    loop, transport, _, events = make_loop([[ToolCalls(calls)], [Done()]])
    await loop.run_turn("go")
    expected = ["call", "call_2", "x", "x_2", "x_2_2", "call_3"]
    assert [e.call for e in events if isinstance(e, ToolCallRequested)] == [
        call(call_id, "list_dir", {}) for call_id in expected
    ]
    sent = transport.requests[1].messages
    assert [c["id"] for c in sent[1]["tool_calls"]] == expected
    assert [m["tool_call_id"] for m in sent[2:]] == expected
    assert_valid(loop.conversation)


@pytest.mark.parametrize(
    ("step", "beats_seen"),
    [
        (0.0, [0, 0, 0, 0]),  # no time passes: no slice is used up, no yield
        (2 * YIELD_EVERY, [0, 1, 2, 3]),  # every delta comes after its slice: a yield each
        (YIELD_EVERY, [0, 1, 2, 3]),  # a delta exactly at the slice's end yields too
        (YIELD_EVERY / 2, [0, 0, 1, 1]),  # every second delta ends a slice
    ],
    ids=["frozen", "slow", "exact", "fast"],
)
async def test_a_fast_stream_lets_the_event_loop_run_between_deltas(
    clock: FakeClock, step: float, beats_seen: list[int]
) -> None:
    """A server that delivers thousands of buffered deltas must not freeze the window:
    after 5 ms of streaming the loop lets the event loop run once (a repaint), then
    streams the next slice."""
    beats = 0

    async def heartbeat() -> None:
        nonlocal beats
        while True:
            beats += 1
            await asyncio.sleep(0)

    seen: list[int] = []

    def note(event: LoopEvent) -> None:
        if isinstance(event, AssistantText):
            seen.append(beats)

    clock.now, clock.step = 0.0, step
    leg: Leg = [TextDelta("a"), TextDelta("b"), TextDelta("c"), TextDelta("d"), Done()]
    loop, _, _, _ = make_loop([leg], on_event=note)
    beating = asyncio.create_task(heartbeat())
    try:
        await loop.run_turn("go")
    finally:
        beating.cancel()
    assert seen == beats_seen


async def test_every_stream_is_closed_when_its_leg_ends() -> None:
    legs: list[Leg] = [
        [ToolCalls((call("a", "list_dir", {}),)), TextDelta("never read")],
        [Done(), TextDelta("never read")],
    ]
    loop, transport, _, _ = make_loop(legs)
    await loop.run_turn("go")
    assert (len(transport.requests), transport.open_streams) == (2, 0)


async def test_a_cancelled_leg_closes_its_stream() -> None:
    gate = asyncio.Event()
    loop, transport, _, _ = make_loop([[TextDelta("hel"), gate, Done()]])
    task = asyncio.create_task(loop.run_turn("go"))
    while not transport.open_streams:
        await asyncio.sleep(0)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert transport.open_streams == 0


async def test_a_stream_that_just_ends_fails_the_turn_saying_so() -> None:
    loop, _, _, events = make_loop([[]], retry=RetryPolicy(attempts=1))
    result = await loop.run_turn("go")
    message = "The stream ended before the leg finished."
    assert (result.outcome, result.message, result.status) == ("failed", message, None)
    assert events[-1] == TurnFailed(message)


async def test_the_leg_limit_fails_the_turn_with_its_event() -> None:
    legs: list[Leg] = [[ToolCalls((call(f"c{n}", "list_dir", {}),))] for n in range(3)]
    loop, _, _, events = make_loop(legs, max_legs_per_turn=2)
    result = await loop.run_turn("go")
    message = "Stopped after 2 legs in one turn without a final answer."
    assert (result.outcome, result.message) == ("failed", message)
    assert events[-1] == TurnFailed(message)


async def test_the_default_loop_allows_100_legs_asks_as_main_and_lets_the_model_choose() -> None:
    legs: list[Leg] = [[ToolCalls((call(f"c{n}", "list_dir", {}),))] for n in range(100)]
    legs.append([ToolCalls((call("last", "write_file", {"path": "p", "content": ""}),))])
    asked: list[str] = []

    def person(event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            asked.append(event.request.source)
            event.request.approve()

    loop, transport, _, _ = make_loop(
        legs, AskingPolicy({"list_dir": "allow list_dir"}), on_event=person
    )
    result = await loop.run_turn("go")
    assert result.message == "Stopped after 100 legs in one turn without a final answer."
    assert asked == []  # the 101st leg, the only one asking, never ran
    assert {r.tool_choice for r in transport.requests} == {"auto"}

    loop, _, _, _ = make_loop(
        [[ToolCalls((call("w", "write_file", {"path": "p", "content": ""}),))], [Done()]],
        AskingPolicy({}),
        on_event=person,
    )
    await loop.run_turn("go")
    assert asked == ["main"]


async def test_a_denied_call_tells_the_model_who_denied_it_and_why() -> None:
    def person(event: LoopEvent) -> None:
        if isinstance(event, ApprovalNeeded):
            event.request.deny("too risky")

    legs: list[Leg] = [
        [ToolCalls((call("w", "write_file", {"path": "p", "content": ""}),))],
        [Done()],
    ]
    loop, _, tools, events = make_loop(legs, AskingPolicy({}), on_event=person)
    await loop.run_turn("go")
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    text = (
        "The user denied this write_file call. Reason: too risky. "
        "Do not retry it unchanged; adjust or ask the user."
    )
    assert (finished.status, finished.content) == ("denied", text)
    assert tools.ran == [] and not any(isinstance(e, ToolCallStarted) for e in events)


async def test_a_tool_of_the_role_that_the_runner_lacks_is_an_unknown_tool() -> None:
    legs: list[Leg] = [[ToolCalls((call("g", "grep", {"pattern": "x"}),))], [Done()]]
    loop, _, tools, events = make_loop(legs)
    await loop.run_turn("go")
    (finished,) = [e for e in events if isinstance(e, ToolCallFinished)]
    assert (finished.status, finished.content) == (
        "error",
        "Unknown tool 'grep' for role assistant. "
        "Available: list_dir, read_file, run_command, write_file.",
    )
    assert tools.ran == []


class PlainStreams(ReplayTransport):
    """A transport whose streams are plain async iterators: nothing to close."""

    def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        events = iter(self.legs.pop(0))

        class Plain:
            def __aiter__(self) -> Plain:
                return self

            async def __anext__(self) -> StreamEvent:
                item = next(events, None)
                if item is None:
                    raise StopAsyncIteration
                assert not isinstance(item, float | asyncio.Event)
                return item

        self.requests.append(request)
        return Plain()


async def test_a_transport_whose_streams_cannot_be_closed_still_works() -> None:
    transport = PlainStreams([[TextDelta("hi"), Done()]])
    loop = AgentLoop(
        transport, RecordingTools(), AskingPolicy({}), model="m", role="assistant", cwd="/p"
    )
    assert (await loop.run_turn("go")).outcome == "done"
    assert loop.conversation.messages[-1] == Message.assistant("hi")
