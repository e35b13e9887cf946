"""A real tool registry whose handlers record what ran."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry


class RecordingTools(ToolRegistry):
    """Real registry whose handlers record what ran; `slow` sleeps until cancelled."""

    def __init__(self) -> None:
        super().__init__()
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
            return ToolOutcome(f"{name} ok {json.dumps(arguments, sort_keys=True)}")

        return handler
