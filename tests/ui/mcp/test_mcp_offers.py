"""A server's prompts under `/` and its resources under `@`: the prompt's command is in
the pop-up with its arguments, running it sends the prompt's text; a resource picked
from `@` goes with the message as its text; a prompt added at run time appears."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.protocol.tools.mcp.view import PromptArgument, PromptRow
from melgui.tools.mcp.server import McpUnavailable
from melgui.ui.mcp.offers import prompt_arguments
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.mcp import fake_entry, fake_stdio, running
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


def user_content(relay: ScriptedRelay, leg: int) -> Any:
    return relay.legs_received[leg].messages[-1]["content"]


def test_prompts_are_commands_and_resources_are_mentions(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry(trusted=True)}}))
    scripted_relay.script(
        [text("Reviewed."), done()],
        [text("Friday."), done()],
        [tool_calls(tool_call("mcp__fake__teach", {}, id="t1"))],
        [text("Taught."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    window.resize(1100, 700)
    box = window.chat.input
    commands = window.desk.prompt.commands

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        await wait_until(lambda: commands.get("mcp__fake__review") is not None, 10)
        box.setFocus()
        qtbot.keyClicks(box, "/mcp__fake")
        assert box.picker.isVisible()
        assert box.picker.values() == ["mcp__fake__review"]

    run(scenario())
    row = box.picker.item(0).text()
    assert row == "/mcp__fake__review  —  Review a file for one kind of problem (MCP server fake)"
    assert commands.get("mcp__fake__review").usage == "<path> [focus]"  # type: ignore[union-attr]
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-prompt-command.png"))

    async def send_prompt() -> None:
        qtbot.keyClick(box, Qt.Key.Key_Tab)
        qtbot.keyClicks(box, "src/app.py focus=style")
        qtbot.keyClick(box, Qt.Key.Key_Return)
        await wait_until(lambda: idle(window, 1), 20)

    run(send_prompt())
    assert user_content(scripted_relay, 0) == "Review src/app.py for style. Be brief."
    type_prompt(qtbot, window, "/mcp__fake__review")
    assert window.chat.note_label.text() == "missing path: <path> [focus]"

    async def mention() -> None:
        box.clear()
        qtbot.keyClicks(box, "When? @notes")
        assert box.picker.values() == ["fake:memo://notes"]
        assert window.grab().save(str(shots / "mcp-resource-mention.png"))
        qtbot.keyClick(box, Qt.Key.Key_Return)  # picks: the resource is read
        await wait_until(lambda: len(box.attachments.chips) == 1, 10)
        qtbot.keyClick(box, Qt.Key.Key_Return)
        await wait_until(lambda: idle(window, 2), 20)

    run(mention())
    content = user_content(scripted_relay, 1)
    assert content[0]["text"].strip() == "When?"
    assert '<file path="fake:memo://notes">' in content[1]["text"]
    assert "The launch is on Friday." in content[1]["text"]  # the text, not its size

    async def taught() -> None:
        type_prompt(qtbot, window, "teach yourself")
        await wait_until(lambda: window.inspector.book.pending(), 20)
        assert window.approve_key()
        await wait_until(lambda: commands.get("mcp__fake__explain") is not None, 20)
        await wait_until(lambda: idle(window, 4), 20)

    run(taught())
    assert commands.get("mcp__fake__explain").usage == "<topic>"  # type: ignore[union-attr]
    run(window.desk.aclose())
    assert commands.get("mcp__fake__review") is None  # gone with its server


def test_a_prompts_arguments_by_position_or_name() -> None:
    prompt = PromptRow(
        "review", arguments=(PromptArgument("path", required=True), PromptArgument("focus"))
    )
    assert prompt_arguments(prompt, "a.py") == ({"path": "a.py"}, "")
    assert prompt_arguments(prompt, "focus=style a.py") == ({"focus": "style", "path": "a.py"}, "")
    assert prompt_arguments(prompt, "a.py naming and tests") == (
        {"path": "a.py", "focus": "naming and tests"},
        "",
    )
    assert prompt_arguments(prompt, '"my file.py"') == ({"path": "my file.py"}, "")
    assert prompt_arguments(prompt, "focus=x") == ({}, "missing path: <path> [focus]")
    assert prompt_arguments(prompt, '"open') == (
        {},
        "cannot read the arguments: No closing quotation",
    )
    bare = PromptRow("hello")
    assert prompt_arguments(bare, "") == ({}, "")
    assert prompt_arguments(bare, "extra") == ({}, "/hello takes no more arguments: extra")


async def test_a_resource_or_prompt_that_cannot_be_had_says_why(tmp_path: Path) -> None:
    async with running(str(tmp_path), fake_stdio()) as manager:
        server = manager.servers["fake"]
        with pytest.raises(McpUnavailable, match="cannot read memo://none"):
            await server.read_resource("memo://none")
        with pytest.raises(McpUnavailable, match="refused nosuch"):
            await server.get_prompt("nosuch", {})
        await manager.set_enabled("fake", False)
        with pytest.raises(McpUnavailable, match="'fake' is not running \\(disabled\\)"):
            await server.read_resource("memo://notes")
