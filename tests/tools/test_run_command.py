"""run_command against real processes: timeouts, grandchildren, floods, stdin, escapes."""

from __future__ import annotations

import asyncio
import os
import signal
from pathlib import Path

import pytest

from melgui.core.protocol.tooling import ToolError
from melgui.tools.commands.process_output import HeadTailBuffer, clean_terminal_text
from melgui.tools.commands.run_command import RUN_COMMAND_TOOL, command_environment
from melgui.tools.context import ToolContext
from melgui.tools.settings import ToolSettings
from melgui.tools.workspace import Workspace

ENV = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "SHELL": "/bin/sh"}


async def run(workspace: Workspace, command: str, **settings: float) -> tuple[str, str]:
    outcome = await RUN_COMMAND_TOOL.run(
        ToolContext(workspace, ToolSettings(**settings), environment=ENV), {"command": command}
    )
    return outcome.status, outcome.content


def is_alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as stat:
            state = stat.read().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, ProcessLookupError):
        return False
    return state not in ("Z", "X")


async def wait_dead(pid: int) -> bool:
    for _ in range(200):
        if not is_alive(pid):
            return True
        await asyncio.sleep(0.05)
    return False


async def wait_for_file(path: Path) -> int:
    for _ in range(400):
        if path.exists() and path.read_text().strip():
            return int(path.read_text().strip())
        await asyncio.sleep(0.05)
    raise AssertionError(f"{path} never appeared")


async def test_exit_code_and_combined_output(workspace: Workspace) -> None:
    status, text = await run(workspace, "echo out; echo err >&2; exit 3")
    assert (status, text) == ("ok", "exit_code=3\nout\nerr\n")


async def test_runs_in_the_project_folder(workspace: Workspace) -> None:
    _, text = await run(workspace, "pwd")
    assert text == f"exit_code=0\n{workspace.root}\n"


async def test_timeout_kills_the_whole_group(workspace: Workspace) -> None:
    command = "sh -c 'sleep 300' & echo $! > grandchild.pid; sleep 300"
    status, text = await run(workspace, command, command_timeout=1.0)
    assert status == "error"
    assert text.startswith("exit_code=143\n")
    assert "[Timed out after 1 s: the command and every process it started" in text
    grandchild = int((workspace.root / "grandchild.pid").read_text())
    assert await wait_dead(grandchild)


@pytest.mark.usefixtures("hostile_parent")
async def test_commands_start_with_default_signals_and_time_out_gently(
    workspace: Workspace,
) -> None:
    status, text = await run(workspace, "grep -E '^Sig(Ign|Blk)' /proc/self/status")
    assert status == "ok"
    masks = dict(line.split(":") for line in text.splitlines()[1:])
    assert int(masks["SigIgn"], 16) == 0 and int(masks["SigBlk"], 16) == 0
    status, text = await run(workspace, "sleep 300", command_timeout=0.5)
    assert text.startswith("exit_code=143\n")  # SIGTERM, not the SIGKILL that follows it


async def test_background_grandchild_holding_the_pipe(workspace: Workspace) -> None:
    status, text = await run(workspace, "sleep 300 & echo $! > bg.pid; echo started")
    pid = int((workspace.root / "bg.pid").read_text())
    try:
        assert status == "ok"
        assert text.startswith("exit_code=0\nstarted\n")
        assert "A background process still holds the output open" in text
    finally:
        os.kill(pid, signal.SIGKILL)


async def test_detached_background_process_does_not_delay(workspace: Workspace) -> None:
    status, text = await run(workspace, "sleep 300 >/dev/null 2>&1 & echo $! > bg.pid; echo ok")
    os.kill(int((workspace.root / "bg.pid").read_text()), signal.SIGKILL)
    assert (status, text) == ("ok", "exit_code=0\nok\n")


async def test_hundred_megabytes_are_capped(workspace: Workspace) -> None:
    command = "head -c 100000000 /dev/zero | tr '\\0' 'x'; echo; echo THE-END"
    status, text = await run(workspace, command, command_output_cap=2000)
    assert status == "ok"
    assert len(text) < 3000
    assert text.startswith("exit_code=0\nxxxx")
    assert "(0 lines) omitted of 100,000,009 bytes (2 lines) in total" in text
    assert text.endswith("xxx\nTHE-END\n")


async def test_reading_stdin_gets_end_of_file(workspace: Workspace) -> None:
    status, text = await run(workspace, "cat; read line; echo read=$?")
    assert (status, text) == ("ok", "exit_code=0\nread=1\n")


async def test_invalid_utf8_and_escapes_are_cleaned(workspace: Workspace) -> None:
    command = r"printf '\033[1;31mred\033[0m \377\376 \033]0;title\007ok\r\n10%%\r99%%\r100%%\n'"
    _, text = await run(workspace, command)
    assert text == "exit_code=0\nred \ufffd\ufffd ok\n100%\n"


async def test_api_keys_are_not_passed_on(workspace: Workspace) -> None:
    env = {
        **ENV,
        "MELIAI_API_KEY": "m",
        "OPENAI_API_KEY": "o",
        "ANTHROPIC_API_KEY": "a",
        "KEEP": "1",
    }
    outcome = await RUN_COMMAND_TOOL.run(
        ToolContext(workspace, ToolSettings(), environment=env), {"command": "env | sort"}
    )
    assert "KEEP=1" in outcome.content
    assert "API_KEY" not in outcome.content


def test_environment_filter() -> None:
    env = command_environment(
        {"OPENAI_API_KEY": "x", "GITHUB_ACCESS_TOKEN": "y", "MY_SECRET_KEY": "z", "HOME": "/h"}
    )
    assert env["HOME"] == "/h" and env["TERM"] == "dumb"
    assert not {"OPENAI_API_KEY", "GITHUB_ACCESS_TOKEN", "MY_SECRET_KEY"} & set(env)


async def test_cancellation_kills_the_group(workspace: Workspace) -> None:
    command = "echo $$ > shell.pid; sh -c 'sleep 300' & echo $! > child.pid; sleep 300"
    task = asyncio.create_task(
        RUN_COMMAND_TOOL.run(
            ToolContext(workspace, ToolSettings(), environment=ENV), {"command": command}
        )
    )
    shell = await wait_for_file(workspace.root / "shell.pid")
    child = await wait_for_file(workspace.root / "child.pid")
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await wait_dead(shell)
    assert await wait_dead(child)


async def test_missing_shell_falls_back_to_sh(workspace: Workspace) -> None:
    env = {**ENV, "SHELL": "/no/such/shell"}
    outcome = await RUN_COMMAND_TOOL.run(
        ToolContext(workspace, ToolSettings(), environment=env), {"command": "echo hi"}
    )
    assert outcome.content == "exit_code=0\nhi\n"


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "Missing required argument 'command'"),
        ({"command": "  "}, "empty"),
        ({"command": 5}, "string"),
    ],
)
async def test_bad_arguments(
    workspace: Workspace, arguments: dict[str, object], message: str
) -> None:
    with pytest.raises(ToolError, match=message):
        await RUN_COMMAND_TOOL.run(
            ToolContext(workspace, ToolSettings(), environment=ENV), arguments
        )


def test_head_tail_buffer_counts() -> None:
    buffer = HeadTailBuffer(10)
    for _ in range(100):
        buffer.feed(b"abc\n")
    assert buffer.total_bytes == 400 and buffer.omitted_bytes == 390
    assert buffer.text().startswith("abc\na\n[… 390 bytes")
    assert buffer.text().endswith("…]\n\nabc\n")


def test_backspaces_and_lone_escape() -> None:
    assert clean_terminal_text(b"abx\bc\x1b7\x1b(B\x00done") == "abcdone"
