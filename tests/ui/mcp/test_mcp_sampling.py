"""An MCP server asks for a model's answer during a call: the window shows what would be
sent and to which model; Send runs one leg on the conversation's connection and the
server gets its answer, Refuse gives the server a refusal and no leg."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.ui.mcp.sampling_bar import SamplingBar
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.mcp import fake_entry
from tests.fakes.window import idle, prompt_and_approve, relay_settings, wait_until


def test_a_sampling_request_is_shown_then_sent_or_refused(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry()}}))
    scripted_relay.script(
        [tool_calls(tool_call("mcp__fake__ask_model", {}, id="a1"))],
        [text("Forty-two."), done()],  # the server's leg
        [tool_calls(tool_call("mcp__fake__ask_model", {"question": "Again?"}, id="a2"))],
        [text("Both done."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    bar: SamplingBar = window.mcp.sampling

    async def asked() -> None:
        await window.desk.start_mcp(extra=config)
        await prompt_and_approve(qtbot, window, "ask the server", bar.isVisible)

    run(asked())
    title = bar.title.text()
    assert "Sampling asked" in title and "<b>fake</b>" in title
    assert "mcp__fake__ask_model" in title and "<b>relay-model</b>" in title
    assert "at most 64 tokens" in title
    assert bar.sent.toPlainText() == (
        "[system]\nAnswer in one word.\n\n[user]\nWhat is six times seven?"
    )
    assert len(scripted_relay.legs_received) == 1  # nothing sent before the person says so
    window.resize(1200, 800)
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-sampling.png"))
    bar.send_button.click()

    async def second() -> None:
        await wait_until(lambda: window.inspector.book.pending(), 20)
        assert window.approve_key()
        await wait_until(lambda: bar.isVisible() and "Again?" in bar.sent.toPlainText(), 20)
        bar.refuse_button.click()
        await wait_until(lambda: idle(window, 3), 20)

    run(second())
    records = window.inspector.book.records
    assert records["a1"].result == "the model (relay-model) said: Forty-two."
    sampled = scripted_relay.legs_received[1].json
    assert sampled["messages"] == [
        {"role": "system", "content": "Answer in one word."},
        {"role": "user", "content": "What is six times seven?"},
    ]
    assert (sampled["model"], sampled["tools"], sampled["tool_choice"]) == (
        "relay-model",
        [],
        "none",
    )
    assert records["a2"].result == "refused: the person refused the sampling request"
    # The two calls' legs, the approved request's leg, the last answer: the refused
    # request sent nothing.
    assert len(scripted_relay.legs_received) == 4
    run(window.desk.aclose())
