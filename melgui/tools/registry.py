"""The one factory the app calls: every base tool and remember/recall for one project."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from functools import partial
from typing import Any

from melgui.core.protocol.memory import ProjectMemory
from melgui.core.protocol.tooling import ToolError, ToolHandler, ToolOutcome, ToolRegistry
from melgui.tools.commands.run_command import run_command
from melgui.tools.files.file_writes import edit_file, write_file
from melgui.tools.files.list_dir import list_dir
from melgui.tools.files.read_file import read_file
from melgui.tools.memory import tools as memory_tools
from melgui.tools.pdf.create_pdf import create_pdf
from melgui.tools.plans import PlanSink, write_plan
from melgui.tools.search.project_search import find_files, grep
from melgui.tools.settings import ToolSettings
from melgui.tools.web_search import SearchProvider, SearxngProvider, web_search
from melgui.tools.workspace import Workspace

WorkspaceHandler = Callable[[Workspace, ToolSettings, dict[str, Any]], Awaitable[ToolOutcome]]

_WORKSPACE_TOOLS: dict[str, WorkspaceHandler] = {
    "read_file": read_file,
    "list_dir": list_dir,
    "grep": grep,
    "find_files": find_files,
    "write_file": write_file,
    "edit_file": edit_file,
    "run_command": run_command,
    "create_pdf": create_pdf,
}


def _guarded(name: str, handler: ToolHandler) -> ToolHandler:
    """An unexpected OS failure (a disk error, a folder deleted meanwhile) is a result too."""

    async def run(arguments: dict[str, Any]) -> ToolOutcome:
        try:
            return await handler(arguments)
        except OSError as exc:
            detail = exc.strerror or str(exc) or type(exc).__name__
            raise ToolError(f"{name} failed: {detail}.") from None

    return run


def search_provider_from(settings: ToolSettings) -> SearchProvider | None:
    if settings.searxng_url:
        return SearxngProvider(settings.searxng_url, timeout=settings.web_search_timeout)
    return None


def build_workspace_tools(
    workspace: Workspace,
    *,
    settings: ToolSettings,
    memory: ProjectMemory,
    plans: PlanSink,
    search_provider: SearchProvider | None = None,
    memory_project: str | None = None,
) -> ToolRegistry:
    """A registry with every base tool of docs/tools.md plus remember/recall.

    The role decides which of them the model is offered (melgui.core.protocol.catalog); a
    registry may hold more than a role sends. `search_provider` overrides the one
    `settings` describes. `memory_project` keys remember/recall (default: the workspace
    root; a worker in its own worktree shares the project's memory through it).
    """
    registry = ToolRegistry()
    for name, handler in _WORKSPACE_TOOLS.items():
        registry.register(name, _guarded(name, partial(handler, workspace, settings)))
    provider = search_provider if search_provider is not None else search_provider_from(settings)
    registry.register("web_search", partial(web_search, provider, settings.web_search_max_results))
    registry.register("write_plan", partial(write_plan, plans))
    cwd = memory_project or str(workspace.root)
    registry.register("remember", partial(memory_tools.remember, memory, cwd))
    registry.register("recall", partial(memory_tools.recall, memory, cwd))
    return registry
