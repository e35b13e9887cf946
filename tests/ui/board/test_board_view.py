"""The agents board in the real window: every agent's state, branch, files, tokens; a
click on a row brings that agent's pane (and its waiting approval) forward."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.core.config.settings import Settings
from melgui.core.worktrees.model import Worktree
from melgui.desk.board.agents_board import AgentsBoard
from melgui.desk.desk import Desk
from melgui.ui.board.board_view import BoardView
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
    [asking] = pane.pending_approvals()  # its card brought forward, the keyboard on it
    assert asking.call.name == "run_command"
    assert pane.chat.answers.focused() == asking.call.id

    tree.itemClicked.emit(signals.view.item(f"pane-{writer.id}"), 0)
    assert manager.area.focused_id == writer.id

    manager.close_pane(failing.id)
    run(wait_until(lambda: tree.topLevelItemCount() == 3))
    assert signals.board.row(f"pane-{failing.id}") is None
    pane.pending_approvals()[0].deny("not now")


def test_a_hidden_board_asks_git_nothing_and_is_current_when_shown(
    qtbot: QtBot, scripted_relay: ScriptedRelay, tmp_path: Path
) -> None:
    asked: list[Worktree] = []

    def count(worktree: Worktree) -> list[str]:
        asked.append(worktree)  # the real one runs git on the GUI thread
        return ["a.txt", "b.txt"]

    settings = Settings(connection="relay", relay_url=scripted_relay.url, model="relay-model")
    desk = Desk(str(tmp_path), settings, api_key="k", plans=lambda title, markdown: None)
    worktree = Worktree(tmp_path / "w2", "melgui/2-notes", "0" * 40, tmp_path)
    board = AgentsBoard(count_files=count)
    view = BoardView(board)
    qtbot.addWidget(view)
    board.add(
        "pane-2", "worker 2", desk.worker_session(model="relay-model"), worktree=lambda: worktree
    )
    qtbot.wait(50)  # a redraw would have run by now
    assert asked == [] and view.tree.topLevelItemCount() == 0
    view.show()
    assert asked == [worktree]
    item = view.tree.topLevelItem(0)
    assert item is not None and [item.text(c) for c in (0, 2, 3)] == [
        "worker 2",
        "melgui/2-notes",
        "2",
    ]
