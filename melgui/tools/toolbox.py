"""The workspace tools, one object each, and a registry of them for one project."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from melgui.core.protocol.tooling import ToolRegistry
from melgui.core.protocol.tools.definition import Tool
from melgui.core.protocol.tools.memory import ProjectMemory
from melgui.tools.commands.run_command import RUN_COMMAND_TOOL
from melgui.tools.context import PlanSink, ToolContext
from melgui.tools.files.file_writes import EDIT_FILE_TOOL, WRITE_FILE_TOOL
from melgui.tools.files.list_dir import LIST_DIR_TOOL
from melgui.tools.files.read_file import READ_FILE_TOOL
from melgui.tools.memory.tools import RECALL_TOOL, REMEMBER_TOOL
from melgui.tools.pdf.create_pdf import CREATE_PDF_TOOL
from melgui.tools.plans import WRITE_PLAN_TOOL
from melgui.tools.search.project_search import FIND_FILES_TOOL, GREP_TOOL
from melgui.tools.settings import ToolSettings
from melgui.tools.web_search import WEB_SEARCH_TOOL, SearchProvider, search_provider_from
from melgui.tools.workspace import Workspace

# Every tool a workspace runs: the base tools and remember/recall (the pane tools run in
# the panes). The catalog says which role is offered which.
WORKSPACE_TOOLS: tuple[Tool[ToolContext, Any], ...] = (
    READ_FILE_TOOL,
    LIST_DIR_TOOL,
    GREP_TOOL,
    FIND_FILES_TOOL,
    WRITE_FILE_TOOL,
    EDIT_FILE_TOOL,
    RUN_COMMAND_TOOL,
    WEB_SEARCH_TOOL,
    WRITE_PLAN_TOOL,
    CREATE_PDF_TOOL,
    REMEMBER_TOOL,
    RECALL_TOOL,
)


def add_workspace_tools(registry: ToolRegistry, context: Callable[[], ToolContext]) -> None:
    """Every workspace tool into `registry`, each call run in the `context()` of its time."""
    for tool in WORKSPACE_TOOLS:
        registry.add(tool, context)


def build_workspace_tools(
    workspace: Workspace,
    *,
    settings: ToolSettings,
    memory: ProjectMemory,
    plans: PlanSink,
    search_provider: SearchProvider | None = None,
    memory_project: str | None = None,
) -> ToolRegistry:
    """A registry with every workspace tool, in one fixed context.

    The role decides which of them the model is offered (melgui.core.protocol.catalog); a
    registry may hold more than a role sends. `search_provider` overrides the one
    `settings` describes.
    """
    context = ToolContext(
        workspace,
        settings,
        memory=memory,
        plans=plans,
        search=search_provider if search_provider is not None else search_provider_from(settings),
        memory_project=memory_project,
    )
    registry = ToolRegistry()
    add_workspace_tools(registry, lambda: context)
    return registry
