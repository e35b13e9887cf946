"""grep and find_files in a project whose subfolder `.gitignore` is a FIFO or a link to
/dev/zero: ripgrep would wait on it (up to the search timeout), so the search says it
skipped that file and lists the project at once."""

from __future__ import annotations

import asyncio
import os

import pytest

from melgui.tools.context import ToolContext
from melgui.tools.search.project_search import FIND_FILES_TOOL, GREP_TOOL
from melgui.tools.search.ripgrep import find_ripgrep
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

BOUND_S = 60.0


def _plant(workspace: Workspace, kind: str) -> None:
    (workspace.root / "a.txt").write_text("needle\n")
    trap = workspace.root / "trap"
    trap.mkdir()
    (trap / "kept.txt").write_text("needle\n")
    if kind == "fifo":
        os.mkfifo(trap / ".gitignore")
    else:
        (trap / ".gitignore").symlink_to("/dev/zero")


@pytest.mark.parametrize("engine", ["ripgrep", "python"])
@pytest.mark.parametrize("kind", ["fifo", "dev-zero"])
async def test_a_special_gitignore_is_a_named_skip_not_a_wait(
    workspace: Workspace, engine: str, kind: str
) -> None:
    if engine == "ripgrep" and find_ripgrep() is None:
        pytest.skip("no rg executable")
    _plant(workspace, kind)
    settings = ToolSettings(search_engine=engine, search_timeout=BOUND_S)  # type: ignore[arg-type]
    listed = await asyncio.wait_for(
        FIND_FILES_TOOL.run(ToolContext(workspace, settings), {"pattern": "*"}), BOUND_S
    )
    assert listed.status == "ok", listed.content
    assert "a.txt" in listed.content and "trap/kept.txt" in listed.content
    assert "trap/.gitignore" in listed.content and "skipped" in listed.content
    matched = await asyncio.wait_for(
        GREP_TOOL.run(ToolContext(workspace, settings), {"pattern": "needle"}), BOUND_S
    )
    assert matched.status == "ok", matched.content
    assert "trap/kept.txt" in matched.content and "trap/.gitignore" in matched.content
