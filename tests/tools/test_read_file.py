"""read_file: windows of lines, resume offsets, huge files and lines in bounded memory."""

from __future__ import annotations

import os
import re
import tracemalloc
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.context import ToolContext
from melgui.tools.files.read_file import READ_FILE_TOOL
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace


async def read(workspace: Workspace, settings: ToolSettings, **arguments: object) -> str:
    outcome = await READ_FILE_TOOL.run(ToolContext(workspace, settings), dict(arguments))
    assert outcome.status == "ok"
    return outcome.content


async def test_whole_small_file_with_numbers(workspace: Workspace, settings: ToolSettings) -> None:
    (workspace.root / "a.txt").write_text("one\ntwo\nthree\n")
    text = await read(workspace, settings, path="a.txt")
    assert text.splitlines() == [
        "a.txt: lines 1-3 of 3 (line numbers start at 1)",
        "     1\tone",
        "     2\ttwo",
        "     3\tthree",
    ]


async def test_offset_and_limit_are_lines_from_one(
    workspace: Workspace, settings: ToolSettings
) -> None:
    (workspace.root / "n.txt").write_text("".join(f"line {i}\n" for i in range(1, 101)))
    text = await read(workspace, settings, path="n.txt", offset=10, limit=3)
    assert "\tline 10\n" in text and "\tline 12\n" in text and "line 13" not in text
    assert text.endswith(
        "[Truncated (line limit reached). To continue, call read_file with offset=13.]"
    )


async def test_truncated_read_resumes_where_it_stopped(workspace: Workspace) -> None:
    lines = [f"row {i:05d} " + "x" * 50 for i in range(1, 5001)]
    (workspace.root / "big.txt").write_text("\n".join(lines) + "\n")
    settings = ToolSettings(read_max_bytes=20_000)
    seen: list[str] = []
    offset = 1
    for _ in range(100):
        text = await read(workspace, settings, path="big.txt", offset=offset)
        seen += [line.split("\t", 1)[1] for line in text.splitlines() if "\t" in line]
        match = re.search(r"offset=(\d+)", text)
        if match is None:
            break
        offset = int(match.group(1))
    assert seen == lines


async def test_huge_file_and_huge_line_in_bounded_memory(workspace: Workspace) -> None:
    path = workspace.root / "huge.txt"
    with open(path, "wb") as handle:
        handle.write(b"first\n")
        for _ in range(64):  # one 64 MiB line
            handle.write(b"y" * (1024 * 1024))
        handle.write(b"\nlast\n")
    settings = ToolSettings()
    tracemalloc.start()
    try:
        text = await read(workspace, settings, path="huge.txt")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 8 * 1024 * 1024
    lines = text.splitlines()
    assert lines[1] == "     1\tfirst"
    assert (
        lines[2].startswith("     2\tyyyy") and "[line cut: 67,108,865 bytes in full]" in lines[2]
    )
    assert len(lines[2]) < settings.read_max_line_chars + 100
    assert lines[3] == "     3\tlast"


async def test_binary_file_is_summarized(workspace: Workspace, settings: ToolSettings) -> None:
    (workspace.root / "img.png").write_bytes(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 10)
    text = await read(workspace, settings, path="img.png")
    assert "binary file (PNG image, 2,568 bytes)" in text
    assert "\x00" not in text


async def test_invalid_utf8_is_replaced_not_fatal(
    workspace: Workspace, settings: ToolSettings
) -> None:
    (workspace.root / "latin.txt").write_bytes(b"caf\xe9\n")
    assert "caf\ufffd" in await read(workspace, settings, path="latin.txt")


async def test_empty_file(workspace: Workspace, settings: ToolSettings) -> None:
    (workspace.root / "empty.txt").write_bytes(b"")
    assert "empty file" in await read(workspace, settings, path="empty.txt")


async def test_offset_past_the_end(workspace: Workspace, settings: ToolSettings) -> None:
    (workspace.root / "a.txt").write_text("one\ntwo\n")
    with pytest.raises(ToolError, match=r"offset 5 is past the end of 'a\.txt', which has 2 lines"):
        await READ_FILE_TOOL.run(ToolContext(workspace, settings), {"path": "a.txt", "offset": 5})


async def test_fifo_is_refused_without_blocking(
    workspace: Workspace, settings: ToolSettings
) -> None:
    os.mkfifo(workspace.root / "pipe")
    with pytest.raises(ToolError, match="FIFO"):
        await READ_FILE_TOOL.run(ToolContext(workspace, settings), {"path": "pipe"})


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "Missing required argument 'path'"),
        ({"path": 3}, "'path' must be a string, not integer"),
        ({"path": "a.txt", "offset": "ten"}, "'offset' must be an integer, not string"),
        ({"path": "a.txt", "limit": 0}, "'limit' must be at least 1"),
        ({"path": "a.txt", "limit": True}, "'limit' must be an integer, not boolean"),
    ],
)
async def test_bad_arguments(
    workspace: Workspace, settings: ToolSettings, arguments: dict[str, object], message: str
) -> None:
    (workspace.root / "a.txt").write_text("x\n")
    with pytest.raises(ToolError, match=message):
        await READ_FILE_TOOL.run(ToolContext(workspace, settings), arguments)


async def test_integral_float_offset_is_accepted(
    workspace: Workspace, settings: ToolSettings
) -> None:
    (workspace.root / "a.txt").write_text("one\ntwo\n")
    assert "\ttwo" in await read(workspace, settings, path="a.txt", offset=2.0)


async def test_escape_refused(workspace: Workspace, settings: ToolSettings, outside: Path) -> None:
    with pytest.raises(ToolError, match="outside the project"):
        await READ_FILE_TOOL.run(
            ToolContext(workspace, settings), {"path": str(outside / "secret.txt")}
        )
