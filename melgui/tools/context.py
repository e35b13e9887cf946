"""What the workspace tools run in: the project, the knobs, the memory, the plans' sink."""

from __future__ import annotations

from collections.abc import Awaitable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Protocol

from melgui.core.protocol.tools.memory import ProjectMemory
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

if TYPE_CHECKING:
    from melgui.tools.web_search import SearchProvider


class PlanSink(Protocol):
    """Receives each plan; may be a plain function or a coroutine function."""

    def __call__(self, title: str, markdown: str) -> Awaitable[None] | None: ...


@dataclass(frozen=True, slots=True)
class ToolContext:
    """One build of the workspace tools' surroundings; a desk makes a new one when its
    settings change, and every call reads the current one.

    `memory_project` keys remember/recall (None: the workspace root; a worker in its own
    worktree shares the project's memory through it). `environment` is what run_command's
    child environment is made from (None: this process's).
    """

    workspace: Workspace
    settings: ToolSettings = field(default_factory=ToolSettings)
    memory: ProjectMemory | None = None
    plans: PlanSink | None = None
    search: SearchProvider | None = None
    memory_project: str | None = None
    environment: Mapping[str, str] | None = None

    @property
    def memory_cwd(self) -> str:
        return self.memory_project or str(self.workspace.root)
