"""The loop's guard around a call: entered after approval, left when the result is in,
even when the call is cancelled or raises; denied calls never enter it."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator

from melgui.core.agent.loop import AgentLoop
from melgui.core.protocol.approval import Deny
from melgui.core.protocol.events import Done, ToolCall, ToolCalls
from melgui.core.protocol.judgement import ASK
from melgui.core.rules.policy import RulePolicy
from tests.fakes.replay import ReplayTransport
from tests.fakes.tools import RecordingTools


class Guard:
    def __init__(self, tools: RecordingTools) -> None:
        self.tools = tools
        self.log: list[str] = []

    @contextlib.asynccontextmanager
    async def __call__(self, call: ToolCall, source: str) -> AsyncIterator[None]:
        self.log.append(f"enter {call.id} {source} ran={len(self.tools.ran)}")
        try:
            yield
        finally:
            self.log.append(f"exit {call.id} ran={len(self.tools.ran)}")


def calls(*items: tuple[str, str, dict[str, object]]) -> ToolCalls:
    return ToolCalls(tuple(ToolCall(i, n, json.dumps(a)) for i, n, a in items))


def make(legs: list[list[object]], policy: RulePolicy) -> tuple[AgentLoop, Guard]:
    tools = RecordingTools()
    guard = Guard(tools)
    loop = AgentLoop(
        ReplayTransport(legs),  # type: ignore[arg-type]
        tools,
        policy,
        model="m",
        role="assistant",
        cwd="/p",
        source="pane 3",
        around_call=guard,
    )
    return loop, guard


async def test_guard_wraps_each_run_and_skips_denied_calls() -> None:
    policy = RulePolicy(modes={"write_file": "auto", "run_command": "auto", "read_file": "auto"})
    policy.judge_call = lambda call, arguments: (  # type: ignore[method-assign]
        ASK if call.id == "c2" else RulePolicy.judge_call(policy, call, arguments)
    )
    legs = [
        [calls(("c1", "write_file", {"path": "a", "content": "x"}), ("c2", "run_command", {}))],
        [Done()],
    ]
    loop, guard = make(legs, policy)
    task = asyncio.ensure_future(loop.run_turn("go"))
    while not loop.pending_approvals():
        await asyncio.sleep(0.01)
    loop.pending_approvals()[0].future.set_result(Deny("no"))
    result = await asyncio.wait_for(task, 5)
    assert result.outcome == "done"
    assert guard.log == ["enter c1 pane 3 ran=0", "exit c1 ran=1"]


async def test_guard_is_left_when_the_call_is_cancelled() -> None:
    policy = RulePolicy(modes={"run_command": "auto"})
    loop, guard = make([[calls(("c1", "run_command", {"slow": True}))]], policy)
    task = asyncio.ensure_future(loop.run_turn("go"))
    while not guard.log:
        await asyncio.sleep(0.01)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    assert guard.log == ["enter c1 pane 3 ran=0", "exit c1 ran=1"]
    assert loop.conversation.pending_call_ids() == []
