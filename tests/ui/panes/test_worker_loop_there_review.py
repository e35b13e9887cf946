"""The Changes view of a worker on a `loop_there` host (its loop in melgui's host there,
reached through a local command that behaves like `docker exec -i box`): Review asks a
reviewer session made as the worker is, a RemoteSession in that host, read-only in the
worker's worktree there; and a hunk is applied onto the folder there by that host."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from melgui.host.remote_session import RemoteSession
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.changes.view import ChangesView
from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.projects import git
from tests.fakes.window import relay_settings, wait_until
from tests.remote.local_target import box_host
from tests.ui.panes.test_worker_loop_there import KEY, box

REVIEW = "Review the change below"
WRITTEN = "written in the worktree there"


def reviewer_leg(request: RecordedRequest) -> list[Any]:
    last = request.last_message or {}
    if last.get("role") != "tool":
        return [tool_calls(tool_call("read_file", {"path": "b.txt"}))]
    read = WRITTEN if WRITTEN in str(last.get("content")) else "nothing"
    return [text(f"b.txt:1: error: it says “{read}”"), done()]


def test_a_loop_there_workers_review_runs_there_and_its_hunk_is_applied_there(
    make_window: Any, run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join([sys.executable, "-m", "melgui", "host"]))
    host, folder, runtime = box(tmp_path)
    (folder / "a.txt").write_text("first\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        git(folder, *args)
    relay = ScriptedRelay(api_key=KEY)
    relay.on(lambda r: REVIEW in r.last_user_text, reviewer_leg)
    relay.script(
        [tool_calls(tool_call("write_file", {"path": "b.txt", "content": f"{WRITTEN}\n"}))],
        [text("Wrote it."), done()],
    )
    said: dict[str, Any] = {}
    with relay, box_host(runtime):
        window = make_window(relay_settings(relay, hosts=[host]), api_key=KEY)

        async def scenario() -> None:
            info, _ = await window.pane_manager.start_worker("@box write b", None, "right")
            pane = window.pane_manager.pane(info.id)
            assert isinstance(pane, AgentPane) and isinstance(pane.session, RemoteSession)
            await wait_until(lambda: window.approvals.first() is not None, timeout=60)
            request = window.approvals.first()
            assert request is not None
            request.approve()
            await wait_until(lambda: "Wrote it." in pane.latest_reply(), timeout=60)
            frame = window.pane_manager.area.frame(info.id)
            assert frame is not None
            frame.changes_button.click()
            await wait_until(lambda: bool(window.findChildren(ChangesView)), 10)
            view = window.findChildren(ChangesView)[0]
            await wait_until(lambda: view.changes is not None and view.idle, 60)
            made, make = [], view.reviewer
            assert make is not None

            def reviewer() -> Any:
                made.append(make())
                return made[-1]

            view.reviewer = reviewer
            view.review_button.click()
            await wait_until(lambda: view.idle, 60)
            said["review"] = view.status.text()
            said["comment"] = view.diff.hunks[0].comments.text()
            said["reviewer"] = made
            view.diff.hunks[0].button.click()
            await wait_until(lambda: view.idle, 60)
            said["applied"] = view.status.text()
            view.close()
            said["worktree"] = pane.worktree_there.worktree if pane.worktree_there else None

        run(scenario())
        run(window.aclose())  # while the host there runs (see test_worker_loop_there.py)
    (reviewer,) = said["reviewer"]
    assert isinstance(reviewer, RemoteSession)  # in melgui's host there, as the worker
    assert said["worktree"] is not None and reviewer.loop.cwd == str(said["worktree"].path)
    assert "Review: 1 findings on 1 hunks." in said["review"]
    assert "error" in said["comment"] and WRITTEN in said["comment"]
    reviews = [leg for leg in relay.legs_received if REVIEW in leg.last_user_text]
    assert len(reviews) == 2 and "write_file" not in reviews[0].tool_names
    assert all(leg.authorization == f"Bearer {KEY}" for leg in reviews)
    assert f"Applied to {folder}: 1 hunk of b.txt." in said["applied"]
    assert (folder / "b.txt").read_text() == f"{WRITTEN}\n"
