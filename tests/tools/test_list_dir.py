"""list_dir: folders first, sizes, capped for huge folders, links shown and never followed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.context import ToolContext
from melgui.tools.files.list_dir import LIST_DIR_TOOL
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace


async def test_entries_with_kinds_and_sizes(workspace: Workspace, settings: ToolSettings) -> None:
    root = workspace.root
    (root / "src").mkdir()
    (root / "README.md").write_text("x" * 1500)
    (root / "a.txt").write_text("hi")
    os.symlink("src", root / "alias")
    outcome = await LIST_DIR_TOOL.run(ToolContext(workspace, settings), {})
    assert outcome.content.splitlines() == [
        "./: 4 entries",
        "dir   src/",
        "file  README.md  (1.5 KB)",
        "file  a.txt  (2 B)",
        "link  alias -> src",
    ]


async def test_subfolder_and_capping(workspace: Workspace) -> None:
    many = workspace.root / "many"
    many.mkdir()
    for i in range(1000):
        (many / f"f{i:04d}").touch()
    outcome = await LIST_DIR_TOOL.run(
        ToolContext(workspace, ToolSettings(list_max_entries=10)), {"path": "many"}
    )
    lines = outcome.content.splitlines()
    assert lines[0] == "many/: 1000 entries"
    assert lines[1] == "file  f0000  (0 B)" and lines[10] == "file  f0009  (0 B)"
    assert lines[-1].startswith("[Capped: showing 10 of 1000 entries")


async def test_symlink_loop_is_listed_not_followed(
    workspace: Workspace, settings: ToolSettings
) -> None:
    os.symlink(".", workspace.root / "self")
    os.symlink("loop2", workspace.root / "loop1")
    os.symlink("loop1", workspace.root / "loop2")
    outcome = await LIST_DIR_TOOL.run(ToolContext(workspace, settings), {"path": "."})
    assert "link  self -> ." in outcome.content
    assert "link  loop1 -> loop2" in outcome.content


async def test_empty_folder(workspace: Workspace, settings: ToolSettings) -> None:
    (workspace.root / "empty").mkdir()
    assert (
        await LIST_DIR_TOOL.run(ToolContext(workspace, settings), {"path": "empty"})
    ).content == "empty/: empty folder."


@pytest.mark.parametrize(
    ("path", "message"),
    [("a.txt", "not a folder"), ("..", "outside the project"), ("nope", "No such folder")],
)
async def test_refusals(
    workspace: Workspace, settings: ToolSettings, path: str, message: str
) -> None:
    (workspace.root / "a.txt").write_text("x")
    with pytest.raises(ToolError, match=message):
        await LIST_DIR_TOOL.run(ToolContext(workspace, settings), {"path": path})


async def test_symlinked_folder_out_is_refused(
    workspace: Workspace, settings: ToolSettings, outside: Path
) -> None:
    os.symlink(outside, workspace.root / "out")
    with pytest.raises(ToolError, match="outside the project"):
        await LIST_DIR_TOOL.run(ToolContext(workspace, settings), {"path": "out"})
