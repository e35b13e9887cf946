"""The built-in tools by role (docs/wire-protocol.md §4), and the tools a desk offers.

Each tool's contract (its docs/tools.md definition, flags, summary) lives in
melgui.core.protocol.tools by concern; this module lists them and nothing else. Tools
that arrive at run time (MCP servers, ACP agents) join through a ToolCatalog.
"""

from __future__ import annotations

from melgui.core.protocol.tools.commands import RUN_COMMAND
from melgui.core.protocol.tools.definition import ROLES, Mode, MustExist, Role, ToolDef
from melgui.core.protocol.tools.files import EDIT_FILE, LIST_DIR, READ_FILE, WRITE_FILE
from melgui.core.protocol.tools.memory import RECALL, REMEMBER
from melgui.core.protocol.tools.panes import PANE_TOOLS
from melgui.core.protocol.tools.pdf import CREATE_PDF
from melgui.core.protocol.tools.plans import WRITE_PLAN
from melgui.core.protocol.tools.search import FIND_FILES, GREP
from melgui.core.protocol.tools.web import WEB_SEARCH

__all__ = [
    "ALL_TOOLS",
    "BASE_TOOLS",
    "DEFAULT_MODES",
    "MEMORY_TOOLS",
    "ORCHESTRATION_TOOLS",
    "READ_ONLY_TOOLS",
    "ROLES",
    "Mode",
    "MustExist",
    "Role",
    "ToolCatalog",
    "ToolDef",
    "tools_for_role",
]

# In the order a leg sends them (docs/tools.md's order).
BASE_TOOLS: tuple[ToolDef, ...] = (
    READ_FILE,
    LIST_DIR,
    GREP,
    FIND_FILES,
    WRITE_FILE,
    EDIT_FILE,
    RUN_COMMAND,
    WEB_SEARCH,
    WRITE_PLAN,
    CREATE_PDF,
)
MEMORY_TOOLS: tuple[ToolDef, ...] = (REMEMBER, RECALL)
ORCHESTRATION_TOOLS: tuple[ToolDef, ...] = PANE_TOOLS

ALL_TOOLS: dict[str, ToolDef] = {
    tool.name: tool for tool in BASE_TOOLS + MEMORY_TOOLS + ORCHESTRATION_TOOLS
}

READ_ONLY_TOOLS: frozenset[str] = frozenset(t.name for t in ALL_TOOLS.values() if t.read_only)

# The approval default of every built-in tool.
DEFAULT_MODES: dict[str, Mode] = {name: tool.approval for name, tool in ALL_TOOLS.items()}


def tools_for_role(role: Role) -> tuple[ToolDef, ...]:
    """Exactly the built-in definitions a leg sends for `role` (docs/wire-protocol.md §4)."""
    if role not in ROLES:
        raise ValueError(f"unknown role {role!r}; expected one of {', '.join(ROLES)}")
    return tuple(tool for tool in ALL_TOOLS.values() if role in tool.roles)


class ToolCatalog:
    """The tools a desk offers: the built-in ones, plus those added at run time.

    Added tools (an MCP server's, an ACP agent's) come after the built-in ones, in the
    order they were added; a name is never taken twice, and built-in names never.
    """

    def __init__(self) -> None:
        self._added: dict[str, ToolDef] = {}
        self._gone: dict[str, str] = {}  # a withdrawn tool's name → why, for a late call

    def add(self, tool: ToolDef) -> None:
        if tool.name in ALL_TOOLS or tool.name in self._added:
            raise ValueError(f"a tool named {tool.name!r} already exists")
        self._added[tool.name] = tool
        self._gone.pop(tool.name, None)

    def remove(self, name: str) -> None:
        self._added.pop(name, None)

    def remove_origin(self, origin: str, reason: str = "") -> None:
        """Forget every tool `origin` added (a server stopped or changed its list);
        `reason` is what a call to one of them is answered from then on."""
        for name in [n for n, tool in self._added.items() if tool.origin == origin]:
            del self._added[name]
            if reason:
                self._gone[name] = reason
            else:
                self._gone.pop(name, None)

    def gone(self, name: str) -> str:
        """Why `name` is no longer offered ("" when it never was, or is again)."""
        return self._gone.get(name, "")

    def get(self, name: str) -> ToolDef | None:
        return ALL_TOOLS.get(name) or self._added.get(name)

    def added(self) -> tuple[ToolDef, ...]:
        return tuple(self._added.values())

    def for_role(self, role: Role) -> tuple[ToolDef, ...]:
        """The definitions a leg sends for `role`: built-in first, then added ones."""
        return tools_for_role(role) + tuple(t for t in self._added.values() if role in t.roles)


class CatalogThere(ToolCatalog):
    """The catalog of a session whose tools run on another machine: that machine's MCP
    servers' tools (`there`, filled as they start) and the desk's added tools, but for
    the MCP servers of this machine, whose calls would not reach it. Read live."""

    def __init__(self, there: ToolCatalog, here: ToolCatalog) -> None:
        super().__init__()
        self.there = there
        self.here = here

    def _here(self, tool: ToolDef | None) -> ToolDef | None:
        if tool is None or tool.origin.startswith("mcp:") or self.there.get(tool.name):
            return None
        return tool

    def add(self, tool: ToolDef) -> None:
        self.there.add(tool)

    def remove(self, name: str) -> None:
        self.there.remove(name)

    def remove_origin(self, origin: str, reason: str = "") -> None:
        self.there.remove_origin(origin, reason)

    def gone(self, name: str) -> str:
        return self.there.gone(name)

    def get(self, name: str) -> ToolDef | None:
        return self.there.get(name) or self._here(self.here.get(name))

    def added(self) -> tuple[ToolDef, ...]:
        mine = self.there.added()
        return mine + tuple(t for t in self.here.added() if self._here(t) is not None)

    def for_role(self, role: Role) -> tuple[ToolDef, ...]:
        return tools_for_role(role) + tuple(t for t in self.added() if role in t.roles)


def reads(catalog: ToolCatalog, name: str) -> bool:
    """`name` changes nothing outside the conversation (what exec's "reads" runs)."""
    tool = catalog.get(name)
    return tool is not None and tool.changes_nothing_outside
