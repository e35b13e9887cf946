"""Workers on a configured host, in the real window over the real sshd: each works in its
own git worktree there (made by melgui's host there), so two workers editing the same
file do not trample each other and the folder stays as it was; the pane's Changes button
shows the worker's diff, read over the link; closing the pane asks about its work and
then removes the worktree there. A host folder that is no git repository says so in the
pane, and its worker works in the folder as before."""

from __future__ import annotations

import asyncio
import shlex
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import RemoteHost
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.changes.view import ChangesView
from melgui.ui.panes.agent_pane import AgentPane
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
    # The Changes view shows the worker's diff, read there; nothing to apply here.
    view = views[0]
    view.resize(1100, 640)
    assert view.grab().save(str(tmp_path / "changes-of-a-worker-there.png"))
    assert view.changes is not None and view.changes.worktree == mine
    assert [(f.path, f.status) for f in view.changes.files] == [("a.txt", "modified")]
    assert "+one" in view.changes.file("a.txt").hunks[0].lines
    assert "on <b>build</b>" in view.summary.text() and "git merge" in view.summary.text()
    assert view.windowTitle() == "Changes · melgui/1-write-one @build"
    assert view.merge_button.isHidden() and view.apply_all_button.isHidden()
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
