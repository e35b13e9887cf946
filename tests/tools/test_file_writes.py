"""write_file and edit_file, and the diff previews that refuse exactly what they refuse."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.context import ToolContext
from melgui.tools.files.diff_preview import preview_edit, preview_write
from melgui.tools.files.file_writes import EDIT_FILE_TOOL, WRITE_FILE_TOOL
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace


async def test_write_creates_folders(workspace: Workspace, settings: ToolSettings) -> None:
    outcome = await WRITE_FILE_TOOL.run(
        ToolContext(workspace, settings), {"path": "a/b/c.txt", "content": "one\ntwo\n"}
    )
    assert outcome.content == "Created a/b/c.txt (2 lines, 8 bytes)."
    assert (workspace.root / "a/b/c.txt").read_text() == "one\ntwo\n"


async def test_write_overwrites_in_place(workspace: Workspace, settings: ToolSettings) -> None:
    target = workspace.root / "f.txt"
    target.write_text("old content\n")
    os.chmod(target, 0o640)
    outcome = await WRITE_FILE_TOOL.run(
        ToolContext(workspace, settings), {"path": "f.txt", "content": "new"}
    )
    assert outcome.content == "Overwrote f.txt (1 lines, 3 bytes; it had 12 bytes)."
    assert target.read_text() == "new"
    assert target.stat().st_mode & 0o777 == 0o640


async def test_write_through_symlinked_parent_out_is_refused(
    workspace: Workspace, settings: ToolSettings, outside: Path
) -> None:
    os.symlink(outside, workspace.root / "out")
    with pytest.raises(ToolError, match="outside the project"):
        await WRITE_FILE_TOOL.run(
            ToolContext(workspace, settings), {"path": "out/new/evil.txt", "content": "x"}
        )
    assert sorted(p.name for p in outside.iterdir()) == ["secret.txt"]


async def test_write_into_git_refused(workspace: Workspace, settings: ToolSettings) -> None:
    (workspace.root / ".git").mkdir()
    with pytest.raises(ToolError, match=r"\.git"):
        await WRITE_FILE_TOOL.run(
            ToolContext(workspace, settings), {"path": ".git/hooks/post-checkout", "content": "x"}
        )
    assert not (workspace.root / ".git" / "hooks").exists()


async def test_write_bad_arguments(workspace: Workspace, settings: ToolSettings) -> None:
    with pytest.raises(ToolError, match="Missing required argument 'content'"):
        await WRITE_FILE_TOOL.run(ToolContext(workspace, settings), {"path": "x.txt"})
    with pytest.raises(ToolError, match="'content' must be a string, not array"):
        await WRITE_FILE_TOOL.run(
            ToolContext(workspace, settings), {"path": "x.txt", "content": ["a"]}
        )


@pytest.fixture
def source(workspace: Workspace) -> Path:
    path = workspace.root / "code.py"
    path.write_text("def f():\n    return 1\n\ndef g():\n    return 1\n")
    return path


async def test_edit_unique_match(
    workspace: Workspace, settings: ToolSettings, source: Path
) -> None:
    outcome = await EDIT_FILE_TOOL.run(
        ToolContext(workspace, settings),
        {
            "path": "code.py",
            "old_string": "def g():\n    return 1",
            "new_string": "def g():\n    return 2",
        },
    )
    assert outcome.content == "Edited code.py: replaced 1 occurrence at line 4."
    assert source.read_text() == "def f():\n    return 1\n\ndef g():\n    return 2\n"


@pytest.mark.parametrize(
    ("old", "new", "message"),
    [
        ("return 1", "return 3", "matches 2 times in 'code.py'"),
        ("return 9", "return 3", r"not found in 'code.py' \(0 matches\)"),
        ("", "x", "'old_string' is empty"),
        ("return 1", "return 1", "identical"),
    ],
)
async def test_edit_errors_write_nothing(
    workspace: Workspace, settings: ToolSettings, source: Path, old: str, new: str, message: str
) -> None:
    before = source.read_bytes()
    stamp = source.stat().st_mtime_ns
    arguments = {"path": "code.py", "old_string": old, "new_string": new}
    with pytest.raises(ToolError, match=message):
        await EDIT_FILE_TOOL.run(ToolContext(workspace, settings), arguments)
    with pytest.raises(ToolError, match=message):
        preview_edit(workspace, "code.py", old, new, False)
    assert source.read_bytes() == before
    assert source.stat().st_mtime_ns == stamp


async def test_edit_replace_all(workspace: Workspace, settings: ToolSettings, source: Path) -> None:
    outcome = await EDIT_FILE_TOOL.run(
        ToolContext(workspace, settings),
        {
            "path": "code.py",
            "old_string": "return 1",
            "new_string": "return 0",
            "replace_all": True,
        },
    )
    assert outcome.content == "Edited code.py: replaced 2 occurrences (the first at line 2)."
    assert source.read_text().count("return 0") == 2


async def test_edit_keeps_crlf_and_odd_bytes(workspace: Workspace, settings: ToolSettings) -> None:
    path = workspace.root / "win.txt"
    path.write_bytes(b"caf\xe9\r\nalpha\r\nbeta\r\n")
    await EDIT_FILE_TOOL.run(
        ToolContext(workspace, settings),
        {"path": "win.txt", "old_string": "alpha\nbeta", "new_string": "A\nB"},
    )
    assert path.read_bytes() == b"caf\xe9\r\nA\r\nB\r\n"


async def test_edit_missing_file_and_binary(workspace: Workspace, settings: ToolSettings) -> None:
    with pytest.raises(ToolError, match="No such file"):
        await EDIT_FILE_TOOL.run(
            ToolContext(workspace, settings),
            {"path": "nope.txt", "old_string": "a", "new_string": "b"},
        )
    (workspace.root / "b.bin").write_bytes(b"a\x00b")
    with pytest.raises(ToolError, match="binary"):
        await EDIT_FILE_TOOL.run(
            ToolContext(workspace, settings),
            {"path": "b.bin", "old_string": "a", "new_string": "b"},
        )


async def test_edit_replace_all_must_be_boolean(
    workspace: Workspace, settings: ToolSettings, source: Path
) -> None:
    arguments = {"path": "code.py", "old_string": "a", "new_string": "b", "replace_all": "yes"}
    with pytest.raises(ToolError, match="'replace_all' must be true or false, not string"):
        await EDIT_FILE_TOOL.run(ToolContext(workspace, settings), arguments)


def test_preview_write_new_and_existing(workspace: Workspace, source: Path) -> None:
    assert preview_write(workspace, "new.txt", "hello\n").splitlines() == [
        "--- /dev/null",
        "+++ b/new.txt",
        "@@ -0,0 +1 @@",
        "+hello",
    ]
    diff = preview_write(workspace, "code.py", "def f():\n    return 1\n")
    assert diff.splitlines()[:2] == ["--- a/code.py", "+++ b/code.py"]
    assert "-def g():" in diff.splitlines()
    assert preview_write(workspace, "code.py", source.read_text()) == "(no changes to code.py)"
    assert not (workspace.root / "new.txt").exists()


def test_preview_edit_matches_the_edit(workspace: Workspace, source: Path) -> None:
    diff = preview_edit(
        workspace, "code.py", "def g():\n    return 1", "def g():\n    return 2", False
    )
    assert diff.splitlines() == [
        "--- a/code.py",
        "+++ b/code.py",
        "@@ -2,4 +2,4 @@",
        "     return 1",
        " ",
        " def g():",
        "-    return 1",
        "+    return 2",
    ]


def test_preview_marks_missing_final_newline(workspace: Workspace) -> None:
    (workspace.root / "n.txt").write_text("a\nb")
    diff = preview_write(workspace, "n.txt", "a\nc")
    assert diff.splitlines()[-4:] == [
        "-b",
        "\\ No newline at end of file",
        "+c",
        "\\ No newline at end of file",
    ]


def test_preview_refuses_like_the_tool(workspace: Workspace, outside: Path) -> None:
    with pytest.raises(ToolError, match="outside the project"):
        preview_write(workspace, "../x.txt", "x")
    with pytest.raises(ToolError, match="outside the project"):
        preview_edit(workspace, str(outside / "secret.txt"), "top", "bottom", False)


def test_preview_of_overwriting_a_binary(workspace: Workspace) -> None:
    (workspace.root / "b.bin").write_bytes(b"\x00\x01")
    assert "cannot be shown" in preview_write(workspace, "b.bin", "text")
