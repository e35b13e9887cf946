"""The window with an MCP server: its state in the panel, an MCP call asked about, run,
and shown in the inspector with its image rendered; restart and per-tool enable."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.mcp import fake_entry
from tests.fakes.window import idle, relay_settings, type_prompt, wait_until


def test_server_status_and_an_mcp_call_in_the_inspector(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    servers = {"fake": fake_entry(), "broken": fake_entry("--fail-start")}
    config.write_text(json.dumps({"mcpServers": servers}))
    scripted_relay.script(
        [text("Let me draw it."), tool_calls(tool_call("mcp__fake__picture", {}, id="p1"))],
        [tool_calls(tool_call("mcp__fake__echo", {"text": "hello from MCP"}, id="e1"))],
        [text("Here is the picture."), done()],
    )
    window: MainWindow = make_window(relay_settings(scripted_relay))
    panel = window.mcp_panel

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        panel.refresh()
        server = window.desk.mcp.servers["fake"]
        assert server.state.status == "ready"
        broken, row = panel.server_items()
        assert row.text(0) == "fake" and row.text(1) == f"ready, {len(server.tools)} tools"
        assert broken.text(1).startswith("failed: ") and "nonexistent.db" in broken.text(1)
        type_prompt(qtbot, window, "draw a red square")
        await wait_until(lambda: window.inspector.book.pending(), 20)
        record = window.inspector.book.pending()[0]
        assert record.call.name == "mcp__fake__picture"  # MCP calls ask by default
        assert window.approve_key()
        await wait_until(lambda: window.inspector.book.pending(), 20)
        window.inspector.show_call("e1")
        title = window.inspector.detail.title.text()
        assert "MCP server fake · read-only · closed world" in title  # echo's annotations
        card = window.chat.transcript.card_html("e1")  # what the tool says of itself
        assert "[MCP server fake · read-only · closed world]" in card
        assert window.approve_key()
        await wait_until(lambda: idle(window, 3), 20)
        window.inspector.show_call("p1")

    run(scenario())
    detail = window.inspector.detail
    assert window.inspector.book.records["p1"].status == "ok"
    assert detail.result.toPlainText().startswith("[image image/png")
    assert detail.rich.isVisible() and detail.rich.shown_images == 1
    assert "Image · image/png" in detail.rich.toPlainText()
    window.resize(1400, 900)
    # MELGUI_SHOTS_DIR=docs renders the README's screenshots.
    shots = Path(os.environ.get("MELGUI_SHOTS_DIR") or tmp_path)
    assert window.grab().save(str(shots / "mcp-inspector.png"))
    window.side_panel.reveal("mcp")
    panel.select("broken")
    run(wait_until(lambda: panel.isVisible()))
    assert "exited with code 2 before it was ready" in panel.detail.text()
    assert panel.grab().save(str(shots / "mcp-servers.png"))


def test_per_tool_enable_and_restart_from_the_panel(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    config = tmp_path / "servers.json"
    config.write_text(json.dumps({"mcpServers": {"fake": fake_entry()}}))
    window: MainWindow = make_window(relay_settings(scripted_relay))
    panel = window.mcp_panel
    catalog = window.desk.catalog

    async def scenario() -> None:
        await window.desk.start_mcp(extra=config)
        panel.refresh()
        row = next(panel.server_items())
        echo = next(c for c in map(row.child, range(row.childCount())) if c.text(0) == "echo")
        echo.setCheckState(0, Qt.CheckState.Unchecked)
        assert catalog.get("mcp__fake__echo") is None
        assert catalog.get("mcp__fake__picture") is not None
        server = window.desk.mcp.servers["fake"]
        assert server.process is not None
        first_pid = server.process.pid
        panel.select("fake")
        panel.restart_selected()
        await wait_until(lambda: server.process is not None and server.process.pid != first_pid, 20)
        await wait_until(lambda: server.state.status == "ready", 20)
        assert catalog.get("mcp__fake__echo") is None  # still disabled after the restart
        panel.select("fake")
        panel.toggle_selected()
        await wait_until(lambda: server.state.status == "disabled", 20)
        assert not [t for t in catalog.added() if t.origin == "mcp:fake"]
        assert "disabled" in next(panel.server_items()).text(1)

    run(scenario())


def test_import_from_another_clients_file_adds_and_starts_its_servers(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any, tmp_path: Path
) -> None:
    from melgui.tools.mcp.config import user_path

    source = tmp_path / "claude_desktop_config.json"
    entry = fake_entry(env={"MCP_FAKE_MARK": "clear-secret-value"})
    source.write_text(json.dumps({"mcpServers": {"imported": entry}}))
    window: MainWindow = make_window(relay_settings(scripted_relay))
    panel = window.mcp_panel
    try:
        report = run(panel.import_from(source))
        assert report is not None and report.added == ("imported",)
        assert "clear-secret-value" not in user_path().read_text()
        # No keyring in tests: the secret became an environment reference to set.
        assert "MCP_IMPORTED_MCP_FAKE_MARK" in panel.notice.text()
        run(wait_until(lambda: "imported" in window.desk.mcp.servers, 20))
        server = window.desk.mcp.servers["imported"]
        run(wait_until(lambda: server.state.status == "failed", 20))
        # Every literal env value was moved out (which are secrets cannot be known).
        assert server.state.line().startswith("failed: the environment variable MCP_IMPORTED_")
    finally:
        user_path().unlink(missing_ok=True)


def test_a_server_there_is_shown_as_its_host_says_now_and_restarted_there(
    scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    from melgui.core.protocol.views.servers_there import ServerThere

    window: MainWindow = make_window(relay_settings(scripted_relay))
    panel = window.mcp_panel
    there = window.desk.mcp_there
    asked: list[tuple[str, str]] = []
    there.on_restart = lambda where, name: asked.append((where, name))
    there.show("build", [ServerThere("build", "db", "ready", "ready, 2 tools", "db-server")])
    (row,) = list(panel.server_items())
    assert row.text(0) == "db · on build" and row.text(1) == "ready, 2 tools"
    # it died there later: the host said so, and the panel shows it
    there.show("build", [ServerThere("build", "db", "failed", "failed: exited (code 3)")])
    (row,) = list(panel.server_items())
    assert row.text(1) == "failed: exited (code 3)"
    panel.tree.setCurrentItem(row)
    assert panel.restart_button.isEnabled()
    panel.restart_button.click()
    assert asked == [("build", "db")]
