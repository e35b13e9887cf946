"""A project's MCP servers waiting for trust are said in the chat, with a button that
trusts the file and starts them (the panel's banner alone went unseen behind the
Inspector's tab)."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import QUrl

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay
from tests.fakes.mcp import fake_entry
from tests.fakes.window import relay_settings, wait_until


def test_servers_waiting_for_trust_are_said_in_the_chat_with_a_trust_button(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    (project / ".melgui").mkdir()
    (project / ".melgui" / "mcp.json").write_text(
        json.dumps({"mcpServers": {"fake": fake_entry()}})
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    manager = window.desk.mcp
    run(wait_until(lambda: manager.untrusted is not None))
    shown = lambda: window.chat.transcript.toPlainText()  # noqa: E731
    run(wait_until(lambda: "waiting for trust" in shown()))
    assert "fake" in shown() and "Trust and start" in shown()
    if os.environ.get("MELGUI_SHOTS_DIR"):  # =docs: the docs' screenshot
        window.resize(1200, 700)
        window.grab().save(
            os.path.join(os.environ["MELGUI_SHOTS_DIR"], "mcp-waiting-for-trust.png")
        )
    window.chat.transcript.anchorClicked.emit(QUrl("act:trust-mcp/"))
    run(wait_until(lambda: manager.servers["fake"].state.status == "ready", 20))
    assert manager.untrusted is None
    window.new_conversation()  # a new chat: nothing waits, nothing said
    run(wait_until(lambda: "waiting for trust" not in window.chat.transcript.toPlainText()))
