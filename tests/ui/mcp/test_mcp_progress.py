"""An MCP call that reports progress shows it on its card in the chat while it runs (a
bar and the server's words), and the line goes when the call ends."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.mcp import fake_entry
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


def test_progress_on_the_calls_card(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry(timeout=30)}}))
    scripted_relay.script(
        [
            text("Working."),
            tool_calls(tool_call("mcp__fake__steps", {"count": 4, "pause": 1.0}, id="s1")),
        ],
        [text("All four steps ran."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    shown = window.chat.transcript.toPlainText

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        type_prompt(qtbot, window, "run the steps")
        await wait_until(lambda: window.inspector.book.pending(), 20)
        assert window.inspector.approve_current()
        await wait_until(lambda: "2 of 4 · step 2 of 4" in shown(), 30)

    run(scenario())
    assert "██████████░░░░░░░░░░ 50%" in shown()
    window.resize(1100, 700)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-progress.png"))
    run(wait_until(lambda: idle(window, 2), 30))
    assert "of 4 · step" not in shown()  # the line went with the call
    assert window.inspector.book.records["s1"].result == "4 steps done"
    run(window.desk.aclose())
