"""The seven pane tools in a registry, run by a window's panes, as the desk runs them
(Desk registers them once and the window sets `desk.panes = Orchestration(...)`)."""

from __future__ import annotations

from melgui.core.protocol.tooling import ToolRegistry
from melgui.tools.panes import add_pane_tools
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.orchestration import Orchestration


def register_orchestration(tools: ToolRegistry, manager: PaneManager) -> Orchestration:
    """The seven pane tools into `tools`, run by `manager`'s panes."""
    orchestration = Orchestration(manager)
    add_pane_tools(tools, lambda: orchestration)
    return orchestration
