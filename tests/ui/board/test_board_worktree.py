"""A worker in its own worktree shows its branch and git's count of the files it changed
on the agents board, counted off the GUI thread (real git repository, real window,
scripted relay)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from pytestqt.qtbot import QtBot

from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.projects import make_project
from tests.fakes.window import relay_settings, wait_until


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The window's project: a git repository with one commit."""
    return make_project(tmp_path, with_git=True)


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Changed the app."), done()]
    edit = {"path": "src/app.py", "old_string": "hello", "new_string": "from a worktree"}
    new = {"path": "NOTES.md", "content": "notes\n"}
    made = {"command": "touch made-by-a-command.txt"}  # no path argument: only git sees it
    calls = (tool_call("edit_file", edit), tool_call("write_file", new))
    return [tool_calls(*calls, tool_call("run_command", made))]


def test_a_worktree_worker_shows_its_branch_and_files(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", _worker)
    settings = relay_settings(scripted_relay)
    settings.approval_modes = {
        **settings.approval_modes,
        "edit_file": "auto",
        "write_file": "auto",
        "run_command": "auto",
    }
    window = make_window(settings)
    manager = window.pane_manager
    board = window.signals.board

    async def scenario() -> int:
        info, prepared = await manager.start_worker("Change the app", None, own_worktree=True)
        assert prepared is not None
        await wait_until(
            lambda: (
                isinstance(p := manager.pane(info.id), AgentPane)
                and p.worktree is not None
                and p.latest_reply() == "Changed the app."
                and not p.bridge.busy
            ),
            20,
        )
        return info.id

    window.signals.dock.show()
    pane_id = run(scenario())
    pane = manager.pane(pane_id)
    assert isinstance(pane, AgentPane) and pane.worktree is not None
    # git counts in a thread; the open board redraws when the count arrives.
    item = window.signals.view.item(f"pane-{pane_id}")
    assert item is not None
    run(wait_until(lambda: item.text(3) == "3" and item.text(2) == pane.worktree.branch))
    row = board.row(f"pane-{pane_id}")
    assert row is not None
    assert (row.state, row.branch, row.files_changed) == ("finished", pane.worktree.branch, 3)
    assert not (project / "NOTES.md").exists()
