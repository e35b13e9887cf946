"""AgentSession: queued messages run in order, stop is clean, a broken observer is harmless."""

from __future__ import annotations

import asyncio

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.events import Done, TextDelta
from melgui.core.protocol.loop_events import LoopEvent, MessageAdded, TurnCancelled
from melgui.core.rules.policy import FixedPolicy
from tests.fakes.replay import ReplayTransport
from tests.fakes.tools import RecordingTools


def make_session(legs: list[list[object]]) -> tuple[AgentSession, ReplayTransport]:
    transport = ReplayTransport(legs)  # type: ignore[arg-type]
    session = AgentSession(
        transport, RecordingTools(), FixedPolicy("all"), model="m", role="assistant", cwd="/p"
    )
    return session, transport


async def test_messages_queue_while_busy_and_run_in_order() -> None:
    session, transport = make_session(
        [[TextDelta("one"), 0.05, Done()], [TextDelta("two"), Done()]]
    )
    seen: list[LoopEvent] = []
    session.subscribe(seen.append)
    session.submit("first")
    session.submit("second")
    assert session.busy and session.queued[-1] == "second"
    await asyncio.wait_for(session.wait_idle(), 5)
    users = [m.content for m in session.conversation.messages if m.role == "user"]
    assert users == ["first", "second"]
    assert len(transport.requests) == 2
    assert transport.requests[1].messages[-1] == {"role": "user", "content": "second"}
    assert session.last_result is not None and session.last_result.outcome == "done"


async def test_stop_cancels_the_turn_and_returns_unsent_messages() -> None:
    session, _ = make_session([[TextDelta("slow"), 10.0, Done()]])
    events: list[LoopEvent] = []
    session.subscribe(events.append)
    session.submit("first")
    session.submit("later")
    await asyncio.sleep(0.05)
    assert session.stop() == ["later"]
    await asyncio.wait_for(session.wait_idle(), 5)
    assert not session.busy
    assert any(isinstance(e, TurnCancelled) for e in events)
    assert session.last_result is not None and session.last_result.outcome == "cancelled"


async def test_failing_observer_does_not_stop_the_loop() -> None:
    session, _ = make_session([[Done()]])
    good: list[LoopEvent] = []

    def broken(event: LoopEvent) -> None:
        raise RuntimeError("view bug")

    session.subscribe(broken)
    unsubscribe = session.subscribe(good.append)
    session.submit("hi")
    await asyncio.wait_for(session.wait_idle(), 5)
    assert any(isinstance(e, MessageAdded) for e in good)
    unsubscribe()
    await session.aclose()
