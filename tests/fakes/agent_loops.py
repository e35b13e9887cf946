"""An agent loop wired to fakes: a replayed transport, recording tools, an event log."""

from __future__ import annotations

import json
from typing import Any

from melgui.core.agent.loop import AgentLoop
from melgui.core.protocol.approval import Decision
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.judgement import ASK, Judgement, allowed
from melgui.core.protocol.loop_events import LoopEvent
from melgui.core.protocol.messages import Conversation
from melgui.core.rules.policy import FixedPolicy
from tests.fakes.replay import Leg, ReplayTransport
from tests.fakes.tools import RecordingTools


def call(call_id: str, name: str, arguments: object) -> ToolCall:
    """A tool call; `arguments` as JSON text, or an object to encode."""
    raw = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return ToolCall(call_id, name, raw)


async def no_sleep(delay: float) -> None:
    return None


def make_loop(
    legs: list[Leg], policy: Any = None, **kwargs: Any
) -> tuple[AgentLoop, ReplayTransport, RecordingTools, list[LoopEvent]]:
    """A loop (model "m", cwd "/project") over `legs`, logging its events to a list;
    `on_event` (say, a person answering approvals) hears each event after it is logged."""
    transport = ReplayTransport(legs)
    tools = kwargs.pop("tools", None) or RecordingTools()
    events: list[LoopEvent] = []
    on_event = kwargs.pop("on_event", None)

    def emit(event: LoopEvent) -> None:
        events.append(event)
        if on_event is not None:
            on_event(event)

    loop = AgentLoop(
        transport,
        tools,
        policy or FixedPolicy("all"),
        model=kwargs.pop("model", "m"),
        role=kwargs.pop("role", "assistant"),
        cwd="/project",
        emit=emit,
        sleep=kwargs.pop("sleep", no_sleep),
        **kwargs,
    )
    return loop, transport, tools, events


def assert_valid(conversation: Conversation) -> None:
    """Every call answered exactly once, directly after its assistant message, in order."""
    copy = Conversation(list(conversation.messages))
    assert not copy.repair_pairing()
    assert copy.messages == conversation.messages


class AskingPolicy:
    """Approves the calls named in `rules` (naming the rule), asks a person for the rest,
    and keeps every answer `record` is handed."""

    def __init__(self, rules: dict[str, str]) -> None:
        self.rules = rules
        self.recorded: list[tuple[ToolCall, Judgement, Decision]] = []

    def judge_call(self, call: ToolCall, arguments: dict[str, Any]) -> Judgement:
        rule = self.rules.get(call.name)
        return allowed("rule", rule) if rule is not None else ASK

    def record(self, call: ToolCall, judgement: Judgement, decision: Decision) -> None:
        self.recorded.append((call, judgement, decision))
