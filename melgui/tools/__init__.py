"""Qt-free executors behind the tools the model can call.

The app calls `build_workspace_tools`; the approval view calls `preview_write` and
`preview_edit`. Names are loaded on first use, so a child process that needs one small
module (the Python search engine) does not pay for importing all of them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from melgui.tools.context import PlanSink
    from melgui.tools.files.diff_preview import preview_edit, preview_write
    from melgui.tools.memory.store import FallbackMemory, LocalMemory
    from melgui.tools.settings import ToolSettings
    from melgui.tools.toolbox import build_workspace_tools
    from melgui.tools.workspace import Workspace

_EXPORTS = {
    "FallbackMemory": "melgui.tools.memory.store",
    "LocalMemory": "melgui.tools.memory.store",
    "PlanSink": "melgui.tools.context",
    "ToolSettings": "melgui.tools.settings",
    "Workspace": "melgui.tools.workspace",
    "build_workspace_tools": "melgui.tools.toolbox",
    "preview_edit": "melgui.tools.files.diff_preview",
    "preview_write": "melgui.tools.files.diff_preview",
}

__all__ = [
    "FallbackMemory",
    "LocalMemory",
    "PlanSink",
    "ToolSettings",
    "Workspace",
    "build_workspace_tools",
    "preview_edit",
    "preview_write",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'melgui.tools' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)
