"""A ToolRunner whose workspace tools run on a remote melgui host, one call at a time,
each with its one result (melgui/remote/link.py); the tools that are not the
workspace's (the panes', the language servers') stay with the runner given for them.

    tools = RemoteTools(link, "/srv/p", local=desk.tools)
    outcome = await tools.run("read_file", {"path": "a"})
"""

from __future__ import annotations

import uuid
from typing import Any

from melgui.core.protocol.tooling import RUNNING_CALL, ToolOutcome, ToolRunner
from melgui.host.tool_calls import outcome_from_json
from melgui.remote.link import Link
from melgui.tools.toolbox import WORKSPACE_TOOLS

REMOTE_TOOLS = frozenset(tool.name for tool in WORKSPACE_TOOLS)


class RemoteTools:
    def __init__(
        self,
        link: Link,
        folder: str,
        *,
        local: ToolRunner | None = None,
        names: frozenset[str] = REMOTE_TOOLS,
    ) -> None:
        self.link = link
        self.folder = folder
        self.local = local
        self.names = names
        # Call ids are this runner's, unique per call it sends (a model's ids may repeat).
        self._prefix = uuid.uuid4().hex[:12]
        self._count = 0

    def knows(self, name: str) -> bool:
        return name in self.names or (self.local is not None and self.local.knows(name))

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        if name not in self.names:
            if self.local is None:
                return ToolOutcome.error(f"Unknown tool {name!r}.")
            return await self.local.run(name, arguments)
        self._count += 1
        running = RUNNING_CALL.get()
        call_id = f"{self._prefix}/{self._count}" + (f"/{running[1]}" if running else "")
        outcome = await self.link.run_call(call_id, self.folder, name, arguments)
        return outcome_from_json(outcome)
