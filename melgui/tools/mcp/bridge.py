"""A server's tools as the desk's tools: ToolDefs in the catalog, handlers in the registry.

Names are assigned in a fixed order (servers by name, then tools by name) so the same
configuration always yields the same names. Removing a server's tools takes its
definitions out of the catalog, so no leg offers them and the loop refuses their calls;
its handlers then answer that the tool is gone.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from melgui.core.protocol.catalog import ALL_TOOLS, ToolCatalog, ToolDef
from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.core.protocol.tools.mcp.naming import tool_name

if TYPE_CHECKING:
    import mcp_types as types

# server name, tool name → the server's call
Caller = Callable[[str, str, dict[str, Any]], Any]


def _schema(tool: types.Tool) -> dict[str, Any]:
    schema = dict(tool.input_schema or {})
    schema.setdefault("type", "object")
    schema.setdefault("properties", {})
    return schema


def _summary_argument(schema: dict[str, Any]) -> str | None:
    """The first required string argument names a call in a few words."""
    properties = schema.get("properties") or {}
    for name in schema.get("required") or []:
        if isinstance(properties.get(name), dict) and properties[name].get("type") == "string":
            return str(name)
    return None


def task_only(tool: types.Tool) -> bool:
    """A tool that runs only as a task (melgui does not run tasks): never offered, so the
    model cannot pick a call that would fail."""
    execution = tool.execution
    return execution is not None and execution.task_support == "required"


def annotations_of(tool: types.Tool) -> dict[str, bool]:
    notes = tool.annotations
    if notes is None:
        return {}
    found = {
        "readOnlyHint": notes.read_only_hint,
        "destructiveHint": notes.destructive_hint,
        "idempotentHint": notes.idempotent_hint,
        "openWorldHint": notes.open_world_hint,
    }
    return {key: bool(value) for key, value in found.items() if value is not None}


class Bridge:
    """Keeps the catalog and registry in step with every server's enabled tools."""

    def __init__(self, catalog: ToolCatalog, registry: ToolRegistry, call: Caller) -> None:
        self.catalog = catalog
        self.registry = registry
        self._call = call
        # model-facing name → (server, tool name, annotations)
        self.offered: dict[str, tuple[str, str, dict[str, bool]]] = {}

    def origin_names(self, origin: str) -> list[str]:
        return [t.name for t in self.catalog.added() if t.origin == origin]

    def withdraw(self, server: str, reason: str = "") -> None:
        """Take `server`'s tools out; `reason` answers a late call to one of them."""
        for name in self.origin_names(f"mcp:{server}"):
            self.offered.pop(name, None)
        self.catalog.remove_origin(f"mcp:{server}", reason)

    def offer(
        self,
        server: str,
        tools: list[types.Tool],
        *,
        roles: tuple[Any, ...],
        trusted: bool,
        disabled: frozenset[str],
    ) -> list[str]:
        """Replace `server`'s tools with `tools` (minus `disabled`); returns the names."""
        self.withdraw(server)
        taken = {t.name for t in self.catalog.added()}
        names = []
        for tool in sorted(tools, key=lambda t: t.name):
            if tool.name in disabled or task_only(tool):
                continue
            name = tool_name(server, tool.name, taken | ALL_TOOLS.keys())
            taken.add(name)
            notes = annotations_of(tool)
            schema = _schema(tool)
            description = tool.description or tool.title or f"{tool.name} (MCP server {server})"
            self.catalog.add(
                ToolDef(
                    name,
                    description,
                    schema,
                    roles=roles,
                    # Annotations are the server's claims: they pre-set the default only
                    # for a server the person trusted.
                    read_only=trusted and notes.get("readOnlyHint", False),
                    summary_argument=_summary_argument(schema),
                    origin=f"mcp:{server}",
                )
            )
            self.registry.register(name, self._handler(server, tool.name, name))
            self.offered[name] = (server, tool.name, notes)
            names.append(name)
        return names

    def _handler(self, server: str, tool: str, name: str) -> Any:
        async def run(arguments: dict[str, Any]) -> ToolOutcome:
            if name not in self.offered:
                return ToolOutcome.error(
                    f"{name} is no longer offered by the MCP server {server!r}."
                )
            outcome: ToolOutcome = await self._call(server, tool, arguments)
            return outcome

        return run
