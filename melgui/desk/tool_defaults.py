"""Tools added at run time (MCP) in sessions: their approval default, and workers' access.

HOOK (MCP × approval rules): the rules in core/agent/policy.py know built-in tools by
name; an MCP tool they have no rule for is asked about ("ask" is every MCP tool's
default). The one exception lives here: a tool whose ToolDef says read-only — which the
bridge sets only for a server the person marked `trusted` and whose tool carries
`readOnlyHint` — runs without asking. A rule the person set for the tool wins. When the
rules learn scopes (per server), this class is where they join.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from melgui.core.protocol.approval import ApprovalPolicy, Approve, Decision
from melgui.core.protocol.catalog import Mode, ToolCatalog
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.tooling import ToolOutcome, ToolRunner


class RuntimeToolDefaults:
    def __init__(
        self, rules: ApprovalPolicy, catalog: ToolCatalog, modes: Mapping[str, Mode]
    ) -> None:
        self.rules = rules
        self.catalog = catalog
        self.modes = modes  # the person's per-tool modes: a mode set there wins

    def check(self, call: ToolCall, arguments: dict[str, Any]) -> Decision | None:
        decision = self.rules.check(call, arguments)
        if decision is not None or call.name in self.modes:
            return decision
        tool = self.catalog.get(call.name)
        if tool is not None and tool.origin != "melgui" and tool.approval == "auto":
            return Approve()
        return None

    def record(self, call: ToolCall, arguments: dict[str, Any], decision: Decision) -> None:
        self.rules.record(call, arguments, decision)


class WithRuntimeTools:
    """A worker's own registry plus the tools added at run time (MCP), looked up live so
    a server that starts or changes its list later reaches workers already running."""

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
