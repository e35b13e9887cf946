"""An in-process transport for journal tests: plays scripted legs, can stall on a gate."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

from melgui.core.protocol.approval import Decision
from melgui.core.protocol.events import StreamError, StreamEvent, ToolCall, WireEntry
from melgui.core.protocol.judgement import ASK, Judgement, allowed
from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.core.protocol.transport import LegRequest, ModelInfo, WireSink

Leg = list["StreamEvent | float | asyncio.Event"]  # float: pause; Event: wait until set


class ReplayTransport:
    """Plays one leg per request, logs each event to the wire sink, keeps the requests."""

    name = "replay"

    def __init__(self, legs: list[Leg]) -> None:
        self.legs = list(legs)
        self.requests: list[LegRequest] = []
        self.open_streams = 0  # streams started and not yet closed (an HTTP response)

    async def stream(
        self, request: LegRequest, wire: WireSink | None = None
    ) -> AsyncIterator[StreamEvent]:
        self.requests.append(request)
        if wire is not None:
            wire(WireEntry("request", json.dumps({"messages": len(request.messages)}), 0.0))
        leg = self.legs.pop(0) if self.legs else [StreamError("no more legs scripted")]
        self.open_streams += 1
        try:
            for item in leg:
                if isinstance(item, float):
                    await asyncio.sleep(item)
                elif isinstance(item, asyncio.Event):
                    await item.wait()
                else:
                    if wire is not None:
                        wire(WireEntry("event", item.kind, 0.0))
                    yield item
        finally:
            self.open_streams -= 1

    async def list_models(self) -> list[ModelInfo]:
        return [ModelInfo("replay-model", True)]

    async def aclose(self) -> None:
        return None


class Tools(ToolRegistry):
    """read_file answers at once; run_command with {"wait": true} waits until cancelled."""

    def __init__(self) -> None:
        super().__init__()
        self.started = asyncio.Event()
        for name in ("read_file", "write_file", "run_command", "write_plan"):
            self.register(name, self._make(name))

    def _make(self, name: str) -> Any:
        async def handler(arguments: dict[str, Any]) -> ToolOutcome:
            self.started.set()
            if arguments.get("wait"):
                await asyncio.sleep(3600)
            if name == "write_plan":
                return ToolOutcome("Plan saved.")
            return ToolOutcome(f"{name}: {json.dumps(arguments, sort_keys=True)}")

        return handler


class AskWrites:
    """Reads run without asking; everything else asks a person (None)."""

    def judge_call(self, call: ToolCall, arguments: dict[str, Any]) -> Judgement:
        return allowed("rule", "") if call.name in ("read_file", "write_plan") else ASK

    def record(self, call: ToolCall, judgement: Judgement, decision: Decision) -> None:
        return None


def call(call_id: str, name: str, arguments: dict[str, Any]) -> ToolCall:
    return ToolCall(call_id, name, json.dumps(arguments))
