"""The window as a view of a real `melgui host` process (`melgui --with-host`): a local
worker's Changes view's Review asks a reviewer session that runs in the host (a
RemoteSession), read-only in the worker's worktree, and its findings land on the hunks."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from melgui.host.remote_session import RemoteSession
from melgui.ui.changes.view import ChangesView
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_windows import HostWindows, worker_noted
from tests.fakes.projects import git
from tests.fakes.window import wait_until

REVIEW = "Review the change below"
ONLY_IN_WORKTREE = "noted in the worktree"


def reviewer_leg(request: RecordedRequest) -> list[Any]:
    """The reviewer reads NOTES.md with its tools (in the worktree), then answers."""
    last = request.last_message or {}
    if last.get("role") != "tool":
        return [tool_calls(tool_call("read_file", {"path": "NOTES.md"}))]
    read = ONLY_IN_WORKTREE if ONLY_IN_WORKTREE in str(last.get("content")) else "nothing"
    return [text(f"NOTES.md:1: note: it says “{read}”\nThat is the review."), done()]


def test_a_local_workers_review_runs_in_the_host_read_only_in_its_worktree(
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    tmp_path: Path,
) -> None:
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "start")):
        git(project, *args)
    scripted_relay.on(lambda r: REVIEW in r.last_user_text, reviewer_leg)
    note = tool_call("write_file", {"path": "NOTES.md", "content": f"{ONLY_IN_WORKTREE}\n"})
    scripted_relay.script([tool_calls(note)], [text("Noted."), done()])
    window = host_windows.make()
    view = host_windows.view_only(window)
    said: dict[str, Any] = {}

    async def scenario() -> None:
        info, _, _, _ = await worker_noted(window)
        frame = window.pane_manager.area.frame(info.id)
        assert frame is not None
        frame.changes_button.click()
        await wait_until(lambda: bool(window.findChildren(ChangesView)), 10)
        changes = window.findChildren(ChangesView)[0]
        await wait_until(lambda: changes.changes is not None and changes.idle, 30)
        said["sessions before"] = len(await view.client.call("session/list"))
        made, make = [], changes.reviewer
        assert make is not None

        def reviewer() -> Any:
            made.append(make())
            return made[-1]

        changes.reviewer = reviewer
        changes.review_button.click()
        assert not changes.idle
        await wait_until(lambda: changes.idle, 60)
        said["reviewer"] = made
        said["status"] = changes.status.text()
        said["comment"] = changes.diff.hunks[0].comments.text() if changes.diff.hunks else ""
        said["sessions after"] = len(await view.client.call("session/list"))
        changes.resize(1000, 560)
        assert changes.grab().save(str(tmp_path / "review-in-the-host.png"))
        changes.close()

    run(scenario())
    (reviewer,) = said["reviewer"]
    assert isinstance(reviewer, RemoteSession)  # in the host, as the window's workers are
    assert reviewer.loop.cwd != str(project) and not reviewer.loop.plan.on
    assert "Review: 1 findings on 1 hunks." in said["status"]
    assert "note" in said["comment"] and ONLY_IN_WORKTREE in said["comment"]
    reviews = [leg for leg in scripted_relay.legs_received if REVIEW in leg.last_user_text]
    assert len(reviews) == 2  # its read in the worktree, then its findings
    assert "+noted in the worktree" in reviews[0].last_user_text
    assert "write_file" not in reviews[0].tool_names  # plan mode in the host: read-only
    assert said["sessions after"] == said["sessions before"]  # the reviewer's was closed
