"""The project's tools, rebuilt when settings change, behind registries that never change.

A session's ToolRegistry forwards each workspace tool to the current build, so the
orchestration tools others register into the main registry survive a settings change.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from melgui.core.config.settings import Settings, config_dir, data_dir
from melgui.core.protocol.catalog import tools_for_role
from melgui.core.protocol.memory import ProjectMemory
from melgui.core.protocol.tooling import ToolOutcome, ToolRegistry
from melgui.tools.commands.sandbox import default_hidden
from melgui.tools.plans import PlanSink
from melgui.tools.registry import build_workspace_tools
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

# Built-in tools the workspace runs (the orchestration tools are the window's).
WORKSPACE_TOOL_NAMES = tuple(tool.name for tool in tools_for_role("worker"))


def tool_settings(settings: Settings) -> ToolSettings:
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
    """The workspace, its current tool build, and a diff provider for the inspector."""

    def __init__(
        self,
        folder: str,
        settings: Settings,
        api_key: str | None,
        plans: PlanSink,
        *,
        memory_project: str | None = None,
    ):
        self.workspace = Workspace(folder, config_dir=config_dir())
        self._memory_project = memory_project  # None: this folder's own memory
        self._plans = plans
        self._build: ToolRegistry = ToolRegistry()
        self.rebuild(settings, api_key)

    @property
    def folder(self) -> str:
        return str(self.workspace.root)

    def rebuild(self, settings: Settings, api_key: str | None) -> None:
        self._build = build_workspace_tools(
            self.workspace,
            settings=tool_settings(settings),
            memory=project_memory(settings, api_key),
            plans=self._plans,
            memory_project=self._memory_project,
        )

    def registry(self) -> ToolRegistry:
        """A new registry whose workspace tools always use the current build."""
        registry = ToolRegistry()
        for name in WORKSPACE_TOOL_NAMES:
            registry.register(name, self._forward(name))
        return registry

    def _forward(self, name: str) -> Callable[[dict[str, Any]], Any]:
        async def run(arguments: dict[str, Any]) -> ToolOutcome:
            return await self._build.run(name, arguments)

        return run

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
