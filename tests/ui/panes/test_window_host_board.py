"""The agents board follows a worker whose session runs in a real `melgui host` process,
as it follows one in the window's process: waiting while its question is asked, then
git's count of the files its worktree changed and its branch, its tokens."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.orchestration import Orchestration
from melgui.ui.window.host_view.view import HostView
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess, runtime_dir
from tests.fakes.projects import git
from tests.fakes.window import relay_settings, wait_until


@pytest.fixture
def host() -> Iterator[HostProcess]:
    with runtime_dir() as runtime:
        process = HostProcess(runtime).start()
        try:
            yield process
        finally:
            process.stop()


def test_the_board_counts_a_host_workers_changed_files(
    host: HostProcess, scripted_relay: ScriptedRelay, make_window: Any, run: Any, project: Path
) -> None:
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "start")):
        git(project, *args)
    notes = tool_call("write_file", {"path": "NOTES.md", "content": "notes\n"})
    todo = tool_call("write_file", {"path": "TODO.md", "content": "todo\n"})
    scripted_relay.script(
        [tool_calls(notes, todo)],
        [text("Both written."), done({"prompt_tokens": 7, "completion_tokens": 5})],
    )
    window = make_window(relay_settings(scripted_relay))
    window.host_view = HostView(window, run(host.client("window")))
    board = window.signals.board
    window.signals.dock.show()

    async def scenario() -> tuple[int, str]:
        info, prepared = await window.pane_manager.start_worker("Notes", None, own_worktree=True)
        assert prepared is not None
        pane = window.pane_manager.pane(info.id)
        assert isinstance(pane, AgentPane) and isinstance(pane.session, RemoteSession)
        key = f"pane-{info.id}"
        await wait_until(lambda: window.approvals.first() is not None, timeout=30)
        row = board.row(key)
        assert row is not None and (row.state, row.waiting) == ("waiting", 1)

        def approved_and_done() -> bool:  # the calls are asked one after the other
            request = window.approvals.first()
            if request is not None:
                request.approve()
            return pane.latest_reply() == "Both written." and not pane.bridge.busy

        await wait_until(approved_and_done, 30)
        assert pane.worktree is not None
        return info.id, pane.worktree.branch

    pane_id, branch = run(scenario())
    key = f"pane-{pane_id}"
    # git counts the worktree's files off the GUI thread; the board redraws when it has.
    item = window.signals.view.item(key)
    assert item is not None
    run(wait_until(lambda: item.text(3) == "2", timeout=20))
    row = board.row(key)
    assert row is not None
    assert (row.state, row.branch, row.files_changed, row.waiting) == ("finished", branch, 2, 0)
    assert row.tokens == 12
    assert not (project / "NOTES.md").exists()  # in the worktree, not the project folder


def _writes_notes(request: RecordedRequest) -> list[Any]:
    """Each worker writes its own file and the shared NOTES.md, then answers."""
    if (request.last_message or {}).get("role") == "tool":
        return [text("Written."), done()]
    task = next(m.get("content", "") for m in request.messages if m.get("role") == "user")
    own = {"path": f"{str(task).split()[-1]}.md", "content": "mine\n"}
    shared = {"path": "NOTES.md", "content": f"{task}\n"}
    return [tool_calls(tool_call("write_file", own), tool_call("write_file", shared))]


def git_calls_logged(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """From now on every git this process starts is the real one behind a script that
    first writes its folder and arguments to the returned file."""
    real, log = shutil.which("git"), tmp_path / "git-calls.log"
    assert real is not None
    folder = tmp_path / "logging-git"
    folder.mkdir()
    script = folder / "git"
    script.write_text(f'#!/bin/sh\necho "$(pwd -P) $*" >> "{log}"\nexec "{real}" "$@"\n')
    script.chmod(0o755)
    monkeypatch.setenv("PATH", f"{folder}{os.pathsep}{os.environ['PATH']}")
    return log


def test_a_host_workers_files_are_read_in_the_host_not_the_window(
    host: HostProcess,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    project: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Two host workers write a file each and the same NOTES.md: the board shows each
    one's count and where they meet, and `read_agent` the files, from the host's readings
    of their worktrees; the window runs no git in either worktree."""
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "start")):
        git(project, *args)
    logged = git_calls_logged(tmp_path, monkeypatch)  # the host started before: not its git
    scripted_relay.on(lambda r: r.tool_role == "worker", _writes_notes)
    settings = relay_settings(scripted_relay)
    settings.approval_modes = {**settings.approval_modes, "write_file": "auto"}
    window = make_window(settings)
    window.host_view = HostView(window, run(host.client("window")))
    board, manager = window.signals.board, window.pane_manager
    window.signals.dock.show()

    async def scenario() -> dict[str, AgentPane]:
        panes = {}
        for name in ("alpha", "beta"):
            info, prepared = await manager.start_worker(f"notes {name}", None, own_worktree=True)
            assert prepared is not None
            pane = manager.pane(info.id)
            assert isinstance(pane, AgentPane) and isinstance(pane.session, RemoteSession)
            panes[f"pane-{info.id}"] = pane
        await wait_until(
            lambda: all(
                p.latest_reply() == "Written." and not p.bridge.busy for p in panes.values()
            ),
            30,
        )
        return panes

    panes = run(scenario())
    keys = list(panes)

    def counted() -> bool:
        rows = [board.row(key) for key in keys]
        return all(row is not None and (row.files_changed, row.conflicts) == (2, 1) for row in rows)

    run(wait_until(counted, timeout=20))
    first = board.row(keys[0])
    assert first is not None and "1 file shared with" in first.overlap
    # The orchestrator's read_agent says the same files, from the same reading.
    said = run(Orchestration(manager).read_agent(int(keys[0].removeprefix("pane-"))))
    assert "Files changed in its worktree" in said.content
    assert "? alpha.md" in said.content and "? NOTES.md" in said.content
    worktrees = [str(p.worktree.path.resolve()) for p in panes.values() if p.worktree]
    assert len(worktrees) == 2
    ran = logged.read_text().splitlines() if logged.exists() else []
    in_worktrees = [line for line in ran if line.startswith(tuple(worktrees))]
    assert in_worktrees == []  # the host read them; the window ran no git there
