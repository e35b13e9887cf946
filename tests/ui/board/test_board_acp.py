"""An ACP agent's pane is on the agents board like a worker: waiting for its permission
request, then finished, with the tokens its agent reported."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.ui.panes.acp_pane import AcpPane
from tests.fakes import ScriptedRelay
from tests.fakes.acp_host import scripted_agent
from tests.fakes.window import relay_settings, wait_until

ASK = "Clean the build."
PLAY = [{"say": "I will clean the build."}, {"ask": "execute", "title": "rm -rf build"}]


def test_an_acp_agent_is_on_the_board(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    window = make_window(relay_settings(scripted_relay))
    script = project.parent / "script.json"
    script.write_text(json.dumps({ASK: PLAY}))
    info = window.pane_manager.open_agent(scripted_agent("--script", str(script)), "tab")
    pane = window.pane_manager.pane(info.id)
    assert isinstance(pane, AcpPane)
    board = window.signals.board
    key = f"pane-{info.id}"
    row = board.row(key)
    assert row is not None and row.name == f"Pane {info.id} · {info.title}"

    async def asked() -> None:
        await wait_until(lambda: bool(pane.acp.host.state.commands) or pane.acp.busy, 20)
        pane.send(ASK)
        await wait_until(lambda: window.approvals.first() is not None, 20)

    run(asked())
    waiting = board.row(key)
    assert waiting is not None and (waiting.state, waiting.waiting) == ("waiting", 1)
    pane.pending_approvals()[0].approve()
    run(wait_until(lambda: (r := board.row(key)) is not None and r.state == "finished", 20))
