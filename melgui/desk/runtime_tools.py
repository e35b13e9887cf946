"""Tools added at run time (MCP servers) reach workers too.

A worker gets its own workspace registry (no orchestration tools); the tools a server
offers live in the desk's main registry. This runner looks them up live, so a server
that starts, or changes its list, later reaches workers already running.
"""

from __future__ import annotations

from typing import Any

from melgui.core.protocol.catalog import ToolCatalog
from melgui.core.protocol.tooling import ToolOutcome, ToolRunner


class WithRuntimeTools:
    def __init__(self, own: ToolRunner, shared: ToolRunner, catalog: ToolCatalog) -> None:
        self.own = own
        self.shared = shared
        self.catalog = catalog

    def _runtime(self, name: str) -> bool:
        tool = self.catalog.get(name)
        return tool is not None and tool.origin != "melgui" and self.shared.knows(name)

    def knows(self, name: str) -> bool:
        return self.own.knows(name) or self._runtime(name)

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if not self.own.knows(name) and self._runtime(name):
            return await self.shared.run(name, arguments)
        return await self.own.run(name, arguments)
