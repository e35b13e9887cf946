"""Workers on a configured host, in the real window over the real sshd: each works in its
own git worktree there (made by melgui's host there), so two workers editing the same
file do not trample each other and the folder stays as it was; the pane's Changes button
shows the worker's diff, read over the link; closing the pane asks about its work and
then removes the worktree there. A host folder that is no git repository says so in the
pane, and its worker works in the folder as before. From the Changes view the worker's
branch is merged into the folder there (a conflicting merge says so and changes
nothing) or discarded, by the host there; and the worktrees a closed window left there
are offered at the next start, to open for review or discard."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel, QPushButton

from melgui.core.config.settings import RemoteHost
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.changes.actions import COMMIT, DISCARD
from melgui.ui.changes.questions import Question
from melgui.ui.changes.view import ChangesView
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.worktree_recovery import RecoveryDialog
from melgui.ui.window.main_window import MainWindow
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.projects import git
from tests.fakes.window import answer, relay_settings, wait_until
from tests.remote.fixtures import Remote, git_folder_there, url

AUTO = {"write_file": "auto"}


def worker_leg(request: RecordedRequest) -> list[Any]:
    """Each worker writes the same file, with its own words (its task's last one); one
    told to look around writes nothing."""
    if (request.last_message or {}).get("role") == "tool" or "look around" in str(
        request.last_user_text
    ):
        return [text("Wrote it."), done()]
    words = request.last_user_text.split()[-1]
    return [tool_calls(tool_call("write_file", {"path": "a.txt", "content": f"{words}\n"}))]


def idle(window: MainWindow, pane_id: int) -> bool:
    pane = window.pane_manager.pane(pane_id)
    return isinstance(pane, AgentPane) and "Wrote it." in pane.latest_reply()


@pytest.fixture
def on_host(
    remote: Remote, make_window: Any, scripted_relay: ScriptedRelay, monkeypatch: pytest.MonkeyPatch
) -> Any:
    """A window with host `build` on a folder there (made by `folder`)."""
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join(remote.host_argv))
    scripted_relay.on(lambda r: r.tool_role == "worker", worker_leg)

    def window_on(folder: Path) -> MainWindow:
        hosts = [RemoteHost(name="build", target=url(remote, folder))]
        settings = relay_settings(scripted_relay, hosts=hosts, approval_modes=AUTO)
        window: MainWindow = make_window(settings)
        return window

    return window_on


def test_two_workers_on_a_host_each_work_in_a_worktree_there_shown_in_changes(
    remote: Remote, on_host: Any, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    folder = git_folder_there(remote, "window-worktrees", {"a.txt": "first\n"})
    window = on_host(folder)
    manager = window.pane_manager
    views: list[ChangesView] = []

    async def scenario() -> None:
        first, _ = await manager.start_worker("@build write one", None, "tab")
        second, _ = await manager.start_worker("@build write two", None, "right")
        await wait_until(lambda: idle(window, first.id) and idle(window, second.id), 120)
        frame = manager.area.frame(first.id)
        assert frame is not None
        button = frame.changes_button
        assert button.isVisibleTo(frame)  # a worker in its own worktree: Changes is offered
        button.click()
        await wait_until(lambda: bool(window.findChildren(ChangesView)), 10)
        view = window.findChildren(ChangesView)[0]
        views.append(view)
        await wait_until(lambda: view.changes is not None and view.diff.change is not None, 60)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 200))
    one, two = (manager.pane(i) for i in (1, 2))
    assert isinstance(one, AgentPane) and isinstance(two, AgentPane)
    assert one.worktree_there is not None and two.worktree_there is not None
    mine, theirs = one.worktree_there.worktree, two.worktree_there.worktree
    assert mine.branch == "melgui/1-write-one" and theirs.branch == "melgui/2-write-two"
    assert one.session.loop.cwd == str(mine.path)
    # Each wrote the same file in its own worktree there; the folder is as it was.
    assert (mine.path / "a.txt").read_text() == "one\n"
    assert (theirs.path / "a.txt").read_text() == "two\n"
    assert (folder / "a.txt").read_text() == "first\n"
    assert mine.path.stat().st_uid == remote.server.user.pw_uid  # made there, by its user
    assert "own worktree, branch <b>melgui/1-write-one</b>" in one.info.text()
    # The Changes view shows the worker's diff, read there; applied, merged and discarded
    # there (test_window_changes_apply_there.py, the next test).
    view = views[0]
    view.resize(1100, 640)
    assert view.grab().save(str(tmp_path / "changes-of-a-worker-there.png"))
    assert view.changes is not None and view.changes.worktree == mine
    assert [(f.path, f.status) for f in view.changes.files] == [("a.txt", "modified")]
    assert "+one" in view.changes.file("a.txt").hunks[0].lines
    assert "on <b>build</b>" in view.summary.text() and "there" in view.summary.text()
    assert view.windowTitle() == "Changes · melgui/1-write-one @build"
    assert not view.merge_button.isHidden() and not view.apply_all_button.isHidden()
    view.close()

    # Closing the pane asks about the work there; confirmed, the worktree goes there.
    async def close() -> str:
        manager.request_close(1)
        await wait_until(lambda: manager.close_dialog is not None, 30)
        assert manager.close_dialog is not None
        return answer(manager.close_dialog, proceed=True)

    shown = qloop.run_until_complete(asyncio.wait_for(close(), 60))
    assert mine.branch in shown and "1 uncommitted change (a.txt)" in shown
    qloop.run_until_complete(
        wait_until(lambda: not mine.path.exists() and manager.tasks.running == 0, 60)
    )
    listed = ("branch", "--list", "--format=%(refname:short)", "melgui/*")
    branches = git(folder, "-c", "safe.directory=*", *listed)
    assert branches.split() == [theirs.branch]  # the other worker's is untouched
    assert (theirs.path / "a.txt").read_text() == "two\n"


def test_a_worker_on_a_host_whose_folder_is_no_git_repository_says_so(
    remote: Remote, on_host: Any, qloop: asyncio.AbstractEventLoop
) -> None:
    folder = remote.folder("window-plain", {"a.txt": "first\n"})
    window = on_host(folder)
    manager = window.pane_manager

    async def scenario() -> None:
        info, _ = await manager.start_worker("@build write plain", None, "tab")
        await wait_until(lambda: idle(window, info.id), 120)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 200))
    pane = manager.pane(1)
    assert isinstance(pane, AgentPane) and pane.worktree is None and pane.worktree_there is None
    said = f"No worktree of its own on build: {folder} is not in a git repository."
    assert said in pane.chat.transcript.toPlainText()
    assert "no worktree" in pane.info.text() and said in pane.info.toolTip()
    assert (folder / "a.txt").read_text() == "plain\n"  # in the folder, as before
    frame = manager.area.frame(1)
    assert frame is not None and not frame.changes_button.isVisibleTo(frame)


def test_closing_the_window_removes_a_host_workers_empty_worktree_there_and_keeps_work(
    remote: Remote, on_host: Any, qloop: asyncio.AbstractEventLoop
) -> None:
    folder = git_folder_there(remote, "window-worktrees-quit", {"a.txt": "first\n"})
    window = on_host(folder)
    manager = window.pane_manager

    async def scenario() -> None:
        idler, _ = await manager.start_worker("@build look around", None, "tab")
        writer, _ = await manager.start_worker("@build write kept", None, "right")
        await wait_until(lambda: idle(window, idler.id) and idle(window, writer.id), 120)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 200))
    idler, writer = (manager.pane(i) for i in (1, 2))
    assert isinstance(idler, AgentPane) and isinstance(writer, AgentPane)
    assert idler.worktree_there is not None and writer.worktree_there is not None
    empty, kept = idler.worktree_there.worktree, writer.worktree_there.worktree
    assert empty.path.is_dir()
    qloop.run_until_complete(asyncio.wait_for(manager.aclose(), 60))  # the window's close
    assert not empty.path.exists()  # it held nothing: gone there, with its branch
    assert (kept.path / "a.txt").read_text() == "kept\n"  # work is never removed unasked
    listed = ("branch", "--list", "--format=%(refname:short)", "melgui/*")
    assert git(folder, "-c", "safe.directory=*", *listed).split() == [kept.branch]


def there_git(folder: Path, *args: str) -> str:
    return git(folder, "-c", "safe.directory=*", *args)


async def open_view(window: MainWindow, pane_id: int) -> ChangesView:
    """The pane's Changes view, opened by its button and read."""
    frame = window.pane_manager.area.frame(pane_id)
    assert frame is not None
    frame.changes_button.click()
    await wait_until(lambda: bool(window.findChildren(ChangesView)), 10)
    view = window.findChildren(ChangesView)[-1]
    await wait_until(lambda: view.changes is not None and view.idle, 60)
    return view


async def choose(view: ChangesView, button: QPushButton, label: str) -> str:
    """Click `button`, answer its question with `label`; the question's text."""
    button.click()
    await wait_until(lambda: view.question is not None and view.question.isVisible(), 10)
    question = view.question
    assert isinstance(question, Question)
    asked = question.text()
    question.click(label)
    await wait_until(lambda: not view.busy, 60)
    return asked


def test_a_host_workers_branch_is_merged_or_discarded_there_from_changes(
    remote: Remote, on_host: Any, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    folder = git_folder_there(remote, "window-merge", {"a.txt": "first\n"})
    for key, value in (("user.name", "Person There"), ("user.email", "p@there.example")):
        there_git(folder, "config", key, value)
    window = on_host(folder)
    manager = window.pane_manager
    said: dict[str, str] = {}

    async def scenario() -> None:
        first, _ = await manager.start_worker("@build write one", None, "tab")
        second, _ = await manager.start_worker("@build write two", None, "right")
        await wait_until(lambda: idle(window, first.id) and idle(window, second.id), 120)
        view = await open_view(window, first.id)
        view.resize(1100, 640)
        assert view.grab().save(str(tmp_path / "merge-a-worker-there.png"))
        said["summary"] = view.summary.text()
        assert view.merge_button.isVisibleTo(view) and view.merge_button.isEnabled()
        assert view.discard_button.isVisibleTo(view)
        assert view.apply_all_button.isVisibleTo(view) and view.review_button.isVisibleTo(view)
        said["asked"] = await choose(view, view.merge_button, COMMIT)
        said["merged"] = view.status.text()
        view.close()
        # Worker 2 changed the same line: its merge conflicts, and changes nothing there.
        view = await open_view(window, second.id)
        said["before"] = there_git(folder, "rev-parse", "HEAD")
        await choose(view, view.merge_button, COMMIT)
        said["refused"] = view.status.text()
        said["after"] = there_git(folder, "rev-parse", "HEAD")
        said["status"] = there_git(folder, "status", "--porcelain")
        said["discard"] = await choose(view, view.discard_button, DISCARD)
        said["discarded"] = view.status.text()
        assert view.changes is not None and view.changes.empty
        view.close()

    qloop.run_until_complete(asyncio.wait_for(scenario(), 300))
    one, two = (manager.pane(i) for i in (1, 2))
    assert isinstance(one, AgentPane) and isinstance(two, AgentPane)
    assert one.worktree_there is not None and two.worktree_there is not None
    mine, theirs = one.worktree_there.worktree, two.worktree_there.worktree
    assert "Apply and Merge branch… write" in said["summary"]
    assert f"into {folder} on build" in said["asked"]
    assert "conflict changes nothing" in said["asked"]
    assert f"Merged {mine.branch} into master." in said["merged"]
    assert (folder / "a.txt").read_text() == "one\n"  # merged there, into the folder
    log = there_git(folder, "log", "--format=%s")
    assert log.split("\n")[0] == "The worker's uncommitted edits to a.txt"
    assert "Not merged: it conflicts in 1 file (a.txt)" in said["refused"]
    assert "Nothing changed" in said["refused"]
    assert said["after"] == said["before"] and said["status"] == ""
    assert not (folder / ".git" / "MERGE_HEAD").exists()
    assert f"{theirs.path} on build" in said["discard"]
    assert f"Discarded: {theirs.branch} is back at its base." in said["discarded"]
    assert (theirs.path / "a.txt").read_text() == "first\n"
    assert there_git(theirs.path, "rev-parse", "HEAD").strip() == theirs.base


def row_text(dialog: RecoveryDialog, branch: str) -> str:
    return " ".join(label.text() for label in dialog.rows[branch].findChildren(QLabel))


def test_worktrees_a_closed_window_left_on_a_host_are_offered_at_the_next_start(
    remote: Remote, on_host: Any, qloop: asyncio.AbstractEventLoop, tmp_path: Path
) -> None:
    folder = git_folder_there(remote, "window-left", {"a.txt": "first\n"})
    window = on_host(folder)
    manager = window.pane_manager

    async def first_run() -> None:
        kept, _ = await manager.start_worker("@build write kept", None, "tab")
        gone, _ = await manager.start_worker("@build write gone", None, "right")
        await wait_until(lambda: idle(window, kept.id) and idle(window, gone.id), 120)

    qloop.run_until_complete(asyncio.wait_for(first_run(), 200))
    kept_pane, gone_pane = (manager.pane(i) for i in (1, 2))
    assert isinstance(kept_pane, AgentPane) and kept_pane.worktree_there is not None
    assert isinstance(gone_pane, AgentPane) and gone_pane.worktree_there is not None
    kept, gone = kept_pane.worktree_there.worktree, gone_pane.worktree_there.worktree
    qloop.run_until_complete(asyncio.wait_for(manager.aclose(), 60))  # the window's close
    assert kept.path.is_dir() and gone.path.is_dir()  # they held work: kept there

    # The next start asks build (a worktree was made there) and offers both.
    again = on_host(folder)
    later = again.pane_manager
    qloop.run_until_complete(wait_until(lambda: later.recovery_dialog is not None, 60))
    dialog = later.recovery_dialog
    assert isinstance(dialog, RecoveryDialog) and dialog.isVisible()
    assert dialog.windowTitle() == "Worktrees from an earlier session on build"
    assert sorted(dialog.rows) == [kept.branch, gone.branch]
    assert "1 uncommitted change (a.txt)" in row_text(dialog, kept.branch)
    assert str(kept.path) in row_text(dialog, kept.branch)
    dialog.resize(760, dialog.sizeHint().height())
    assert dialog.grab().save(str(tmp_path / "worktrees-left-there.png"))
    # Discard asks first, naming what goes there; then it is removed there, with its branch.
    dialog.rows[gone.branch].findChild(QPushButton, "discard").click()
    qloop.run_until_complete(wait_until(lambda: dialog.confirm is not None, 30))
    assert dialog.confirm is not None
    shown = answer(dialog.confirm, proceed=True)
    assert f"{gone.path} on build" in shown and "1 uncommitted change (a.txt)" in shown
    qloop.run_until_complete(wait_until(lambda: gone.branch not in dialog.rows, 60))
    assert not gone.path.exists()
    # Open for review: a worker pane there on the kept worktree, no task sent.
    dialog.rows[kept.branch].findChild(QPushButton, "review").click()
    (info,) = later.registry.all()
    pane = later.pane(info.id)
    assert isinstance(pane, AgentPane) and pane.worktree == kept
    assert pane.worktree_there is not None and pane.worktree_there.host == "build"
    assert pane.session.loop.cwd == str(kept.path)
    assert pane.session.conversation.messages == []
    assert info.where == "build" and not dialog.isVisible()
    assert (kept.path / "a.txt").read_text() == "kept\n"
    listed = ("branch", "--list", "--format=%(refname:short)", "melgui/*")
    assert there_git(folder, *listed).split() == [kept.branch]
