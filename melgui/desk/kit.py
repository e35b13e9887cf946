"""The project's tools: one context, rebuilt when settings change, that registries read.

A session's ToolRegistry runs each workspace tool in the kit's current context, so the
orchestration tools others register into the main registry survive a settings change.

The context (its memory store, search provider, sandbox) and the tools' modules are made
at their first use: a window that is the view of a melgui host never runs a tool, and
loads none of them (the host does).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Any

from melgui.core.config.settings import Settings, config_dir, data_dir
from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.core.protocol.tools.memory import ProjectMemory
from melgui.tools.workspace import Workspace

if TYPE_CHECKING:
    from melgui.tools.context import PlanSink, ToolContext
    from melgui.tools.settings import ToolSettings


def tool_settings(settings: Settings) -> ToolSettings:
    from melgui.tools.commands.sandbox import default_hidden
    from melgui.tools.settings import ToolSettings

    return ToolSettings(
        command_timeout=settings.command_timeout,
        searxng_url=settings.web_search_url.strip() or None,
        sandbox_commands=settings.sandbox_commands,
        sandbox_network=settings.sandbox_network,
        sandbox_hidden=default_hidden(os.environ, (config_dir(), data_dir())),
    )


def project_memory(settings: Settings, api_key: str | None) -> ProjectMemory:
    """The relay's store with the local one behind it, or the local one alone."""
    from melgui.tools.memory.store import FallbackMemory, LocalMemory

    local = LocalMemory(data_dir() / "memory.sqlite3")
    if settings.connection == "relay" and settings.relay_url.strip():
        from melgui.core.transports.relay_memory import RelayMemory

        return FallbackMemory(RelayMemory(settings.relay_url.strip(), api_key), local)
    return local


class WorkspaceKit:
    """The workspace, its tools' current context, and a diff provider for the inspector."""

    def __init__(
        self,
        folder: str,
        settings: Settings,
        api_key: str | None,
        plans: PlanSink,
        *,
        memory_project: str | None = None,
        env: Mapping[str, str] | None = None,
    ):
        self.workspace = Workspace(folder, config_dir=config_dir())
        # Set on top of this process's environment for run_command (a configured host's
        # `env`, sent with a loop-there session); None or empty: this process's own.
        self.env = dict(env) if env else None
        self._memory_project = memory_project  # None: this folder's own memory
        self._plans = plans
        self._context: ToolContext | None = None
        self.rebuild(settings, api_key)

    @property
    def folder(self) -> str:
        return str(self.workspace.root)

    def rebuild(self, settings: Settings, api_key: str | None) -> None:
        """The tools' context for `settings` from now on (made at its first use)."""
        self._settings, self._api_key = settings, api_key
        self._context = None

    @property
    def context(self) -> ToolContext:
        """The context the workspace tools run in now."""
        if self._context is None:
            from melgui.tools.context import ToolContext
            from melgui.tools.web_search import search_provider_from

            knobs = tool_settings(self._settings)
            self._context = ToolContext(
                self.workspace,
                knobs,
                memory=project_memory(self._settings, self._api_key),
                plans=self._plans,
                search=search_provider_from(knobs),
                memory_project=self._memory_project,
                environment={**os.environ, **self.env} if self.env else None,
            )
        return self._context

    def registry(self) -> ToolRegistry:
        """A new registry whose workspace tools always run in the current context."""
        from melgui.tools.pins import add_pin_tool
        from melgui.tools.toolbox import add_workspace_tools

        registry = ToolRegistry()
        add_workspace_tools(registry, self._current)
        add_pin_tool(registry)  # a worker's conversation pins its own facts
        return registry

    def _current(self) -> ToolContext:
        return self.context

    def diff(self, name: str, arguments: dict[str, Any]) -> str:
        """The inspector's DiffProvider (blocking: call it in a worker thread)."""
        try:
            from melgui.tools.files.diff_preview import preview_edit, preview_write
        except ImportError:
            return "(diff preview is not available; see the arguments below)"
        path = str(arguments.get("path", ""))
        if name == "write_file":
            return preview_write(self.workspace, path, str(arguments.get("content", "")))
        return preview_edit(
            self.workspace,
            path,
            str(arguments.get("old_string", "")),
            str(arguments.get("new_string", "")),
            bool(arguments.get("replace_all", False)),
        )


class WorkspaceTools(ToolRegistry):
    """A registry whose workspace tools (each in `context()`'s context of its time) join
    at its first use, their modules loaded then: what is registered meanwhile (the pane
    and pin tools, an MCP server's) stays on top of them, as if they had come first."""

    def __init__(self, context: Callable[[], ToolContext]) -> None:
        super().__init__()
        self._context: Callable[[], ToolContext] | None = context

    def fill(self) -> None:
        """The workspace tools in now (the first use would put them in)."""
        self._fill()

    def _fill(self) -> None:
        context, self._context = self._context, None
        if context is None:
            return
        from melgui.tools.toolbox import WORKSPACE_TOOLS

        for tool in WORKSPACE_TOOLS:
            if not super().knows(tool.name):  # one registered meanwhile stays on top
                self.add(tool, context)

    @property
    def filled(self) -> bool:
        """Whether the workspace tools are in (used) yet."""
        return self._context is None

    def knows(self, name: str) -> bool:
        self._fill()
        return super().knows(name)

    def names(self) -> list[str]:
        self._fill()
        return super().names()

    async def run(self, name: str, arguments: dict[str, Any]) -> ToolOutcome:
        self._fill()
        return await super().run(name, arguments)
