"""The MCP panel with a server that needs an OAuth sign-in: its state says so, Sign in
opens the browser ($BROWSER: the stand-in that follows the redirects) and the server
becomes ready; Sign out forgets the tokens."""

from __future__ import annotations

import json
import os
import webbrowser
from pathlib import Path
from typing import Any

import pytest

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay
from tests.fakes.oauth import browser_env, guarded_server, opened
from tests.fakes.window import relay_settings, wait_until


def test_sign_in_and_out_from_the_panel(
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    env, log = browser_env(tmp_path)
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    monkeypatch.setattr(webbrowser, "_tryorder", None)  # read $BROWSER afresh
    monkeypatch.setattr(webbrowser, "_browsers", {})
    with guarded_server() as server:
        config = tmp_path / "servers.json"
        config.write_text(json.dumps({"mcpServers": {"guarded": {"url": server.url}}}))
        window: MainWindow = make_window(relay_settings(scripted_relay))
        panel = window.mcp_panel
        guarded: Any = None

        async def start() -> None:
            nonlocal guarded
            await window.desk.start_mcp(extra=config)
            guarded = window.desk.mcp.servers["guarded"]
            panel.refresh()
            panel.select("guarded")

        run(start())
        # The window never opens a browser on its own.
        assert guarded.state.line() == "sign-in needed: asks for a sign-in"
        assert opened(log) == []
        assert panel.sign_in_button.text() == "Sign in"
        (row,) = panel.server_items()
        assert row.text(1) == "sign-in needed: asks for a sign-in"

        panel.sign_in_button.click()
        run(wait_until(lambda: guarded.state.status == "ready", 30))
        panel.refresh()
        assert len(opened(log)) == 1
        assert panel.sign_in_button.text() == "Sign out"
        assert panel.detail.text().endswith("Signed in (OAuth)")
        assert next(panel.server_items()).text(1) == "ready, 1 tool"
        window.side_panel.reveal("mcp")
        panel.select("guarded")
        run(wait_until(lambda: panel.isVisible()))
        shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
        assert panel.grab().save(str(shots / "mcp-sign-in.png"))

        panel.sign_in_button.click()
        run(wait_until(lambda: guarded.state.status == "sign-in", 30))
        panel.refresh()
        assert guarded.state.line() == "sign-in needed: signed out"
        assert not guarded.sign_in.signed_in()
        assert panel.sign_in_button.text() == "Sign in"
        run(window.desk.aclose())
