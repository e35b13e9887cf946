"""The agents board in the real window: every agent's state, branch, files, tokens; a
click on a row brings that agent's pane (and its waiting approval) forward."""

from __future__ import annotations

from typing import Any

from pytestqt.qtbot import QtBot

from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import ScriptedRelay
from tests.fakes.board_scenario import run_agents, script, settings_overrides
from tests.fakes.window import relay_settings, wait_until


def test_the_board_lists_every_agent_and_a_click_shows_its_pane(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any
) -> None:
    script(scripted_relay)
    window = make_window(relay_settings(scripted_relay, **settings_overrides()))
    signals = window.signals
    assert signals.dock.isHidden()
    window.actions_by_name["board"].trigger()  # View → Agents board
    assert signals.dock.isVisible()

    waiting, writer, failing = run(run_agents(window))
    run(wait_until(lambda: signals.view.tree.topLevelItemCount() == 4))
    tree = signals.view.tree
    rows = [[tree.topLevelItem(i).text(c) for c in range(5)] for i in range(4)]
    assert rows[0][:2] == ["Main conversation", "finished"]
    assert rows[1][0] == f"Pane {waiting.id} · {waiting.title}"
    assert rows[1][1].startswith("waiting for approval since ") and rows[1][1].endswith(
        "(just now)"
    )
    assert rows[2][1:5] == ["finished", "shared folder", "2", "4.1k"]
    assert rows[3][1] == "failed: The model is overloaded; try again later."
    assert [r[4] for r in rows] == ["2.0k", "0", "4.1k", "0"]
    assert "1 waiting for you" in signals.view.summary.text()

    item = signals.view.item(f"pane-{waiting.id}")
    assert item is not None
    manager = window.pane_manager
    manager.area.focus_pane(failing.id)
    tree.itemClicked.emit(item, 0)  # the person clicks the waiting worker's row
    pane = manager.pane(waiting.id)
    assert isinstance(pane, AgentPane)
    assert manager.area.focused_id == waiting.id
    assert manager.area.tabs.currentIndex() == manager.area.tab_of(waiting.id)
    record = pane.inspector.current_record()
    assert record is not None and record.call.name == "run_command"

    tree.itemClicked.emit(signals.view.item(f"pane-{writer.id}"), 0)
    assert manager.area.focused_id == writer.id

    manager.close_pane(failing.id)
    run(wait_until(lambda: tree.topLevelItemCount() == 3))
    assert signals.board.row(f"pane-{failing.id}") is None
    pane.pending_approvals()[0].deny("not now")
