"""The agents board follows a worker whose session runs in a real `melgui host` process,
as it follows one in the window's process: waiting while its question is asked, then
git's count of the files its worktree changed and its branch, its tokens."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.host_view.view import HostView
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
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
