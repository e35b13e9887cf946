"""Workers in their own worktrees, in the real main window: the scripted orchestrator
spawns one in a git project, reads which files it changed, and closing its pane asks
before discarding; worktrees left by a crash are offered at the next start."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel, QMessageBox, QPushButton
from pytestqt.qtbot import QtBot

from melgui.core.config.trust import FolderTrust
from melgui.core.protocol.tooling import ToolError
from melgui.core.worktrees.create import create_worktree
from melgui.core.worktrees.recovery import melgui_worktrees
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneManager
from melgui.ui.panes.orchestration import Orchestration
from melgui.ui.panes.worker_dialog import WorkerDialog
from melgui.ui.panes.worktree_recovery import RecoveryDialog
from melgui.ui.settings.dialog import SettingsDialog
from melgui.ui.window.commands import ask_worker
from tests.fakes import RecordedRequest, ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.projects import git, make_project, tree
from tests.fakes.window import answer, relay_settings, wait_until
from tests.fakes.worktree_repos import use_test_identity

AUTO = {"spawn_agent": "auto", "read_agent": "auto", "edit_file": "auto", "run_command": "auto"}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The window's project: a git repository with one commit."""
    return make_project(tmp_path, with_git=True)


def _worker(request: RecordedRequest) -> list[Any]:
    if (request.last_message or {}).get("role") == "tool":
        return [text("Changed the app."), done()]
    edit = {"path": "src/app.py", "old_string": "hello", "new_string": "from a worktree"}
    return [
        tool_calls(
            tool_call("edit_file", edit, id="w1"),
            tool_call("run_command", {"command": "pwd"}, id="w2"),
        )
    ]


def test_spawn_agent_in_a_git_project_works_in_its_own_worktree(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    before = tree(project)
    gate = threading.Event()
    scripted_relay.on(lambda r: r.tool_role == "worker", _worker)
    scripted_relay.script(
        [tool_calls(tool_call("spawn_agent", {"task": "Change the app"}, id="o1"))],
        [hold(gate), tool_calls(tool_call("read_agent", {"pane": 1}, id="o2"))],
        [text("Done."), done()],
    )
    settings = relay_settings(scripted_relay, role="orchestrator")
    settings.approval_modes = {**settings.approval_modes, **AUTO}
    window = make_window(settings)
    manager = window.pane_manager

    async def scenario() -> None:
        window.bridge.submit("Have a worker change the app.")
        await wait_until(
            lambda: (
                isinstance(p := manager.pane(1), AgentPane)
                and p.state.name == "idle"
                and p.latest_reply() == "Changed the app."
            )
        )
        gate.set()
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 3)

    run(scenario())
    pane = manager.pane(1)
    assert isinstance(pane, AgentPane) and pane.worktree is not None
    worktree = pane.worktree
    assert worktree.branch == "melgui/1-change-the-app"
    assert pane.session.loop.cwd == str(worktree.path.resolve())
    assert project.resolve() not in worktree.path.resolve().parents
    assert (worktree.path / "src" / "app.py").read_text() == "print('from a worktree')\n"
    assert tree(project) == before  # the main folder is untouched
    legs = scripted_relay.legs_received
    spawned = next(m for m in legs[1].messages if m.get("tool_call_id") == "o1")["content"]
    assert "own git worktree" in spawned and worktree.branch in spawned
    worker_leg = next(
        r for r in legs if r.tool_role == "worker" and (r.last_message or {}).get("role") == "tool"
    )
    pwd = next(m for m in worker_leg.messages if m.get("tool_call_id") == "w2")["content"]
    assert str(worktree.path.resolve()) in pwd
    read = legs[-1].messages[-1]["content"]
    assert "Files changed in its worktree" in read and "M src/app.py" in read

    # Closing the pane asks and says what would be lost (git reads it in a thread);
    # Cancel keeps everything.
    shown = answer(run(_asked_to_close(manager, 1)), proceed=False)
    assert "1 uncommitted change (src/app.py)" in shown and worktree.branch in shown
    assert manager.pane(1) is pane and worktree.path.is_dir()
    # The window's quit does not count it: quitting keeps worktrees for the next start.
    assert all(loss.kind != "changes" for loss in window.desk.loss_registry.losses())
    # Confirmed: the worktree and its branch go once the worker has stopped.
    answer(run(_asked_to_close(manager, 1)), proceed=True)
    run(wait_until(lambda: removed(manager, worktree.path), timeout=20))
    assert git(project, "branch", "--list", "melgui/*").strip() == ""
    assert tree(project) == before


def removed(manager: PaneManager, folder: Path) -> bool:
    """The closed worker's worktree is gone whole: git deletes the folder first, then
    its record, and the branch goes after (two more git runs); the pane manager's
    removal task has ended."""
    return not folder.exists() and manager.tasks.running == 0


async def _asked_to_close(manager: PaneManager, pane_id: int) -> QMessageBox:
    """The person's close, from the running loop as a click is: the question comes once
    git has read the worktree in a thread (the pane stays open meanwhile)."""
    manager.request_close(pane_id)
    assert manager.close_dialog is None and manager.pane(pane_id) is not None
    await wait_until(lambda: manager.close_dialog is not None)
    assert manager.close_dialog is not None
    return manager.close_dialog


def test_a_worktree_without_work_goes_when_its_pane_closes_without_asking(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", lambda r: [text("Nothing to do."), done()])
    window = make_window(relay_settings(scripted_relay))
    manager = window.pane_manager

    async def scenario() -> tuple[Any, Any]:
        info, prepared = await manager.start_worker("look around", None)
        pane = manager.pane(info.id)
        assert isinstance(pane, AgentPane)
        await wait_until(lambda: pane.latest_reply() == "Nothing to do.")
        return info, prepared

    info, prepared = run(scenario())
    assert prepared is not None

    async def close() -> None:
        manager.request_close(info.id)  # git reads in a thread, finds nothing, closes
        await wait_until(lambda: manager.pane(info.id) is None)

    run(close())
    assert manager.close_dialog is None
    # git removes the folder first, then its record, the branch and melgui's note
    run(wait_until(lambda: not prepared.worktree.path.exists(), timeout=20))
    run(wait_until(lambda: melgui_worktrees(project) == [], timeout=20))


def test_the_person_can_choose_the_shared_folder_and_a_plain_folder_always_shares(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", lambda r: [text("ok"), done()])
    window = make_window(relay_settings(scripted_relay))
    manager = window.pane_manager

    async def start(task: str, own: bool) -> AgentPane:
        info, prepared = await manager.start_worker(task, None, own_worktree=own)
        pane = manager.pane(info.id)
        assert prepared is None and isinstance(pane, AgentPane) and pane.worktree is None
        await wait_until(lambda: pane.latest_reply() == "ok")
        return pane

    shared = run(start("shared", False))
    assert shared.session.loop.cwd == str(project.resolve())
    (project / ".git").rename(project / "not-git")  # now a folder without git
    run(start("plain", True))


def test_worktrees_left_by_a_crash_are_offered_at_the_next_start(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    # An earlier run "crashed": two workers' worktrees are still there, one with work.
    kept = create_worktree(project, 1, "keep this work").worktree
    (kept.path / "work.txt").write_text("unsaved\n")
    other = create_worktree(project, 2, "throw away").worktree
    window = make_window(relay_settings(scripted_relay))
    manager = window.pane_manager
    run(wait_until(lambda: manager.recovery_dialog is not None))
    dialog = manager.recovery_dialog
    assert isinstance(dialog, RecoveryDialog) and dialog.isVisible()
    assert list(dialog.rows) == [kept.branch, other.branch]
    assert "1 untracked file (work.txt)" in _row_text(dialog, kept.branch)
    # Discard asks first, naming what goes (read again: it may have changed since).
    (other.path / "late.txt").write_text("written after the dialog opened\n")
    dialog.rows[other.branch].findChild(QPushButton, "discard").click()
    run(wait_until(lambda: dialog.confirm is not None))
    box = dialog.confirm
    assert isinstance(box, QMessageBox) and "1 untracked file (late.txt)" in box.informativeText()
    # More work arrives before the answer: nothing is discarded that was not shown.
    (other.path / "later.txt").write_text("and more\n")
    answer(box, proceed=True)
    run(wait_until(lambda: dialog.status.isVisibleTo(dialog)))
    assert "changed since you were asked" in dialog.status.text()
    assert other.path.is_dir() and other.branch in dialog.rows
    (other.path / "later.txt").unlink()
    dialog.confirm = None
    dialog.rows[other.branch].findChild(QPushButton, "discard").click()
    run(wait_until(lambda: dialog.confirm is not None))
    answer(dialog.confirm, proceed=True)
    run(wait_until(lambda: other.branch not in dialog.rows))
    assert not other.path.exists()
    # Open for review: a worker pane on the worktree, no task sent.
    dialog.rows[kept.branch].findChild(QPushButton, "review").click()
    (info,) = manager.registry.all()
    pane = manager.pane(info.id)
    assert isinstance(pane, AgentPane) and pane.worktree == kept
    assert pane.session.conversation.messages == []
    assert not dialog.isVisible()
    assert (kept.path / "work.txt").read_text() == "unsaved\n"


def _row_text(dialog: RecoveryDialog, branch: str) -> str:
    return " ".join(label.text() for label in dialog.rows[branch].findChildren(QLabel))


def test_new_worker_dialog_chooses_per_worker(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", lambda r: [text("ok"), done()])
    (project / "README.md").write_text("# uncommitted\n")
    window = make_window(relay_settings(scripted_relay))
    manager = window.pane_manager

    def new_worker(task: str, own: bool, carry: bool) -> AgentPane:
        dialog = ask_worker(window)
        assert isinstance(dialog, WorkerDialog)
        assert dialog.own.isEnabled() and dialog.own.isChecked()  # the setting's default
        assert not dialog.carry.isChecked()
        dialog.task.setPlainText(task)
        dialog.own.setChecked(own)
        dialog.carry.setChecked(carry)
        assert dialog.carry.isEnabled() is own
        count = len(manager.registry.all())
        dialog.accept()

        async def started() -> AgentPane:
            await wait_until(
                lambda: (
                    len(manager.registry.all()) == count + 1
                    and manager.pane(manager.registry.all()[-1].id) is not None
                )
            )
            pane = manager.pane(manager.registry.all()[-1].id)
            assert isinstance(pane, AgentPane)
            await wait_until(lambda: pane.latest_reply() == "ok")
            return pane

        return run(started())

    shared = new_worker("in the folder", own=False, carry=False)
    assert shared.worktree is None and shared.session.loop.cwd == str(project.resolve())
    own = new_worker("on a branch", own=True, carry=True)
    assert own.worktree is not None
    assert (own.worktree.path / "README.md").read_text() == "# uncommitted\n"
    assert (project / "README.md").read_text() == "# uncommitted\n"


def test_settings_keep_the_copy_list_and_setup_command_per_project(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, project: Path
) -> None:
    window = make_window(relay_settings(scripted_relay))
    folder = window.policy.project
    other = {"/elsewhere": [".env"]}
    window.settings.worktree_copy = dict(other)
    dialog = SettingsDialog(window.settings, window.policy, [], window.tasks, window)
    tab = dialog.workers_tab
    assert tab.own.isChecked() and not tab.carry.isChecked()
    tab.copy.setPlainText(".env\n\n.venv\n")
    tab.setup.setText("make deps")
    tab.own.setChecked(False)
    draft = dialog.draft()
    assert draft.worktree_copy == {**other, folder: [".env", ".venv"]}
    assert draft.worktree_setup == {folder: "make deps"}
    assert draft.worker_worktrees is False
    tab.copy.setPlainText("")
    tab.setup.setText("")
    draft = dialog.draft()
    assert draft.worktree_copy == other and draft.worktree_setup == {}
    dialog.tabs.setCurrentWidget(tab)
    dialog.reject()


def test_the_window_keeps_running_while_a_worktree_is_set_up(
    qtbot: QtBot, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    scripted_relay.on(lambda r: r.tool_role == "worker", lambda r: [text("ok"), done()])
    gate = project.parent / "setup-may-end"
    settings = relay_settings(scripted_relay)
    FolderTrust().trust(project)  # an untrusted folder's setup command never runs
    settings.worktree_setup = {
        str(project.resolve()): f"echo installing; while [ ! -e {gate} ]; do sleep 0.05; done"
    }
    window = make_window(settings)
    manager = window.pane_manager
    orchestration = Orchestration(manager)

    async def scenario() -> tuple[Any, Any]:
        starting = asyncio.ensure_future(manager.start_worker("slow setup", None))
        await wait_until(lambda: manager.registry.all())
        (info,) = manager.registry.all()
        # The loop runs while the setup command does; the worker is named, not yet there.
        with pytest.raises(ToolError, match="still starting"):
            await orchestration.read_agent(info.id)
        assert manager.panes() == []
        gate.touch()
        started, prepared = await starting
        pane = manager.pane(started.id)
        assert isinstance(pane, AgentPane)
        await wait_until(lambda: pane.latest_reply() == "ok")
        return started, prepared

    _info, prepared = run(scenario())
    assert prepared.setup is not None and prepared.setup.ok
    assert "installing" in prepared.setup.output


def test_closing_a_worker_that_committed_asks_and_cancel_keeps_its_branch(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    use_test_identity(monkeypatch)  # the worker's `git commit` runs with the app's environment
    before = tree(project)

    def worker(request: RecordedRequest) -> list[Any]:
        if (request.last_message or {}).get("role") == "tool":
            return [text("Committed."), done()]
        edit = {"path": "src/app.py", "old_string": "hello", "new_string": "committed"}
        commit = {"command": "git commit -qam 'worker: greet differently'"}
        return [tool_calls(tool_call("edit_file", edit), tool_call("run_command", commit))]

    scripted_relay.on(lambda r: r.tool_role == "worker", worker)
    settings = relay_settings(scripted_relay)
    settings.approval_modes = {**settings.approval_modes, **AUTO}
    window = make_window(settings)
    manager = window.pane_manager

    async def committed() -> AgentPane:
        info, prepared = await manager.start_worker("Greet differently", None)
        assert prepared is not None
        pane = manager.pane(info.id)
        assert isinstance(pane, AgentPane)
        await wait_until(lambda: pane.latest_reply() == "Committed." and not pane.bridge.busy)
        return pane

    pane = run(committed())
    worktree = pane.worktree
    assert worktree is not None
    assert git(worktree.path, "status", "--porcelain").strip() == ""  # all of it committed
    pane_id = next(info.id for info, shown in manager.panes() if shown is pane)

    shown = answer(run(_asked_to_close(manager, pane_id)), proceed=False)
    assert "1 commit not merged into the main folder's branch" in shown
    assert "worker: greet differently" in shown and worktree.branch in shown
    assert manager.pane(pane_id) is pane and worktree.path.is_dir()
    assert git(project, "branch", "--list", worktree.branch).strip()

    answer(run(_asked_to_close(manager, pane_id)), proceed=True)
    run(wait_until(lambda: removed(manager, worktree.path), timeout=20))
    assert git(project, "branch", "--list", "melgui/*").strip() == ""
    assert tree(project) == before  # nothing of it was merged or applied
