"""The project's tools: one context, rebuilt when settings change, that registries read.

A session's ToolRegistry runs each workspace tool in the kit's current context, so the
orchestration tools others register into the main registry survive a settings change.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

from melgui.core.config.settings import Settings, config_dir, data_dir
from melgui.core.protocol.tooling import ToolRegistry
from melgui.core.protocol.tools.memory import ProjectMemory
from melgui.tools.commands.sandbox import default_hidden
from melgui.tools.context import PlanSink, ToolContext
from melgui.tools.pins import add_pin_tool
from melgui.tools.settings import ToolSettings
from melgui.tools.toolbox import add_workspace_tools
from melgui.tools.web_search import search_provider_from
from melgui.tools.workspace import Workspace


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
        self.context = ToolContext(self.workspace)
        self.rebuild(settings, api_key)

    @property
    def folder(self) -> str:
        return str(self.workspace.root)

    def rebuild(self, settings: Settings, api_key: str | None) -> None:
        knobs = tool_settings(settings)
        self.context = ToolContext(
            self.workspace,
            knobs,
            memory=project_memory(settings, api_key),
            plans=self._plans,
            search=search_provider_from(knobs),
            memory_project=self._memory_project,
            environment={**os.environ, **self.env} if self.env else None,
        )

    def registry(self) -> ToolRegistry:
        """A new registry whose workspace tools always run in the current context."""
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
