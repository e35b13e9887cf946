"""Parallel workers in the real window (real git, scripted relay): two change the same
line, and the agents board, both panes and the orchestrator's list_panes and read_agent
say so; the merge queue, started by the person, lands the third after sending its
failed tests back, and stops at the conflict."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel
from pytestqt.qtbot import QtBot

from melgui.core.config.trust import FolderTrust
from melgui.core.thread.entries import UserEntry
from melgui.ui.board.overlap_notes import NOTE_NAME
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.orchestration import Orchestration
from melgui.ui.settings.dialog import SettingsDialog
from tests.fakes import ScriptedRelay
from tests.fakes.parallel_scenario import TEST_COMMAND, script, settings_overrides, start_workers
from tests.fakes.projects import make_project
from tests.fakes.window import relay_settings, wait_until
from tests.fakes.worktree_repos import run_git


@pytest.fixture
def project(tmp_path: Path) -> Path:
    folder = make_project(tmp_path, with_git=True)
    FolderTrust().trust(folder)  # the test command may run there
    return folder


def test_overlaps_are_shown_everywhere_and_the_queue_lands_what_it_can(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    script(scripted_relay)
    folder = str(project.resolve())
    window = make_window(relay_settings(scripted_relay, **settings_overrides(folder)))
    window.signals.dock.show()
    world, team, notes = run(start_workers(window))
    manager = window.pane_manager

    # The board: both rows name the other and the conflict to be; the third is clear.
    view = window.signals.view
    run(wait_until(lambda: "conflict to be" in view.summary.text()))
    cells = {key: view.item(f"pane-{info.id}") for key, info in
             (("world", world), ("team", team), ("notes", notes))}  # fmt: skip
    assert all(item is not None for item in cells.values())
    assert cells["world"].text(5) == (
        f"⚠ 1 file shared with Pane {team.id} · {team.title} (1 conflict to be)"
    )
    assert cells["notes"].text(5) == "—"
    assert "src/app.py, also changed by" in cells["team"].toolTip(5)
    assert "2 workers' changes overlap (1 conflict to be)" in view.summary.text()

    # Both panes: a note under the header; none on the third.
    def note(pane_id: int) -> QLabel | None:
        frame = manager.area.frame(pane_id)
        found = frame.findChild(QLabel, NOTE_NAME) if frame is not None else None
        return found if found is not None and not found.isHidden() else None

    run(wait_until(lambda: note(world.id) is not None and note(team.id) is not None))
    world_note = note(world.id)
    assert world_note is not None and "Conflicts to be" in world_note.text()
    assert f"src/app.py, also changed by Pane {team.id}" in world_note.accessibleName()
    assert "your line 1 against its line 1" in world_note.accessibleName()
    assert note(notes.id) is None

    # The orchestrator reads the same in list_panes and read_agent.
    panes = window.desk.panes
    assert isinstance(panes, Orchestration)
    listed = run(panes.list_panes()).content
    assert "Overlapping work: these workers changed the same files" in listed
    assert (
        f"- Pane {world.id} · {world.title}: src/app.py, also changed by Pane {team.id}" in listed
    )
    read = run(panes.read_agent(team.id)).content
    assert f"- src/app.py, also changed by Pane {world.id} · {world.title}: 1 hunk clash" in read
    assert "Overlapping work" not in run(panes.read_agent(notes.id)).content

    # The merge queue: nothing lands until the person starts it.
    parallel = window.parallel
    head = run_git(project, "rev-parse", "HEAD")
    assert parallel.view.add_finished() == 3
    assert [item.state for item in parallel.queue.items] == ["waiting"] * 3
    assert f"Each must pass `{TEST_COMMAND}`" in parallel.view.header.text()
    assert run_git(project, "rev-parse", "HEAD") == head
    notes_pane = manager.pane(notes.id)
    assert isinstance(notes_pane, AgentPane)
    assert parallel.queue.remove(f"pane-{team.id}")
    parallel.queue.add(f"pane-{team.id}", "team", team_worktree(manager, team.id))  # last
    parallel.view.refresh()  # as the event loop would, before the person can click
    assert parallel.view.start_button.isEnabled()
    parallel.view.start_button.click()
    run(parallel.queue.wait())
    first, second, third = (parallel.queue.item(f"pane-{info.id}") for info in (world, notes, team))
    assert first is not None and second is not None and third is not None
    assert first.state == "merged", first.detail
    assert third.state == "conflict", third.detail
    assert (project / "src" / "app.py").read_text().count("<<<<<<<") == 1  # left for you
    assert parallel.queue.note.startswith("Stopped at team")
    # The notes failed their test and went back to the worker, which removed the TODO,
    # finished, and waits in the queue again (rebased on the first branch).
    run(wait_until(lambda: second.state == "waiting", 20))
    task = [e for e in notes_pane.session.thread.entries if isinstance(e, UserEntry)][-1]
    assert task.text.startswith("The merge queue rebased your branch")
    assert "NOTES.md:3:TODO: say what changed." in task.text
    landed = run_git(project, "rev-parse", "HEAD").strip()
    assert notes_pane.worktree is not None and notes_pane.worktree.base == landed
    parallel.view.refresh()
    states = [parallel.view.tree.topLevelItem(i).text(2) for i in range(3)]
    assert sorted(states) == ["conflict", "merged", "waiting"]

    # The person aborts the conflicting merge, takes that branch out and starts again.
    run_git(project, "merge", "--abort")
    assert parallel.queue.remove(f"pane-{team.id}")
    parallel.view.refresh()
    parallel.view.start_button.click()
    run(parallel.queue.wait())
    assert second.state == "merged", second.detail
    assert (project / "NOTES.md").read_text() == "# Notes\n\nAll done.\n"
    assert "hello, world" in (project / "src" / "app.py").read_text()


def team_worktree(manager: Any, pane_id: int) -> Any:
    pane = manager.pane(pane_id)
    assert isinstance(pane, AgentPane) and pane.worktree is not None
    return pane.worktree


def test_settings_keep_the_test_command_per_project_and_the_failure_choice(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any
) -> None:
    window = make_window(relay_settings(scripted_relay))
    folder = window.policy.project
    window.settings.merge_test_command = {"/elsewhere": "make check"}
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    tab = dialog.workers_tab
    assert tab.test_command.text() == "" and tab.on_failure.currentData() == "send_back"
    tab.test_command.setText("  pytest -q ")
    tab.on_failure.setCurrentIndex(tab.on_failure.findData("stop"))
    draft = dialog.draft()
    assert draft.merge_test_command == {"/elsewhere": "make check", folder: "pytest -q"}
    assert draft.merge_test_failure == "stop"
    dialog.reject()
