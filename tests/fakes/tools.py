"""A real tool registry whose handlers record what ran."""

from __future__ import annotations

import asyncio
import json
from typing import Any, Protocol

from melgui.core.protocol.tooling import ResultPart, ToolOutcome, ToolRegistry


class Clock(Protocol):
    def advance(self, seconds: float) -> None: ...


class RecordingTools(ToolRegistry):
    """Real registry whose handlers record what ran; `slow` sleeps until cancelled,
    `explode` raises, `takes` moves `clock` on that many seconds, `image` (base64) comes
    back as a result part."""

    def __init__(self, clock: Clock | None = None) -> None:
        super().__init__()
        self.clock = clock
        self.ran: list[tuple[str, dict[str, Any]]] = []
        for name in ("read_file", "write_file", "run_command", "list_dir"):
            self.register(name, self._make(name))

    def _make(self, name: str) -> Any:
        async def handler(arguments: dict[str, Any]) -> ToolOutcome:
            self.ran.append((name, arguments))
            if arguments.get("slow"):
                await asyncio.sleep(3600)
            if arguments.get("explode"):
                raise RuntimeError("boom")
            if self.clock is not None and "takes" in arguments:
                self.clock.advance(float(arguments["takes"]))
            parts: tuple[ResultPart, ...] = ()
            if "image" in arguments:
                parts = (ResultPart("image", data=arguments["image"], mime_type="image/png"),)
            return ToolOutcome(f"{name} ok {json.dumps(arguments, sort_keys=True)}", parts=parts)

        return handler
