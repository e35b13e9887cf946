"""The Changes view of a worker on a configured host, in the real window over the real
sshd, does what a local worker's does, there: a hunk, a file and everything applied onto
the folder there (by melgui's host there), an apply that would conflict with the
person's edits there changing nothing and saying so, and Review asking a read-only
session whose tools read the worktree there, its findings on the hunks."""

from __future__ import annotations

import asyncio
import html
import shlex
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import RemoteHost
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.changes.actions import DISCARD
from melgui.ui.changes.view import ChangesView
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.main_window import MainWindow
from tests.fakes import RecordedRequest, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote, git_folder_there, url
from tests.ui.remote.test_window_worktrees_there import choose, open_view, there_git

AUTO = {"write_file": "auto"}
LINES = "".join(f"line {n}\n" for n in range(1, 21))
EDITED = LINES.replace("line 2\n", "line 2 (worker)\n").replace("line 19\n", "line 19 (worker)\n")
REVIEW = "Review the change below"
ONLY_THERE = "written by the worker there"  # in the worktree there, nowhere here


def worker_leg(request: RecordedRequest) -> list[Any]:
    """The worker edits a.txt in two places, adds b.txt and changes c.txt, then stops."""
    if (request.last_message or {}).get("role") == "tool":
        return [text("Wrote it."), done()]
    calls = [
        tool_call("write_file", {"path": "a.txt", "content": EDITED}),
        tool_call("write_file", {"path": "b.txt", "content": f"{ONLY_THERE}\n"}),
        tool_call("write_file", {"path": "c.txt", "content": "c by the worker\n"}),
    ]
    return [tool_calls(*calls)]


def reviewer_leg(request: RecordedRequest) -> list[Any]:
    """The reviewer reads b.txt with its tools (there, in the worktree), then says what
    it read as a finding on a.txt's second hunk."""
    last = request.last_message or {}
    if last.get("role") != "tool":
        return [tool_calls(tool_call("read_file", {"path": "b.txt"}))]
    read = ONLY_THERE if ONLY_THERE in str(last.get("content")) else "nothing"
    return [text(f"a.txt:19: warning: b.txt says “{read}”\nThat is the review."), done()]


@pytest.fixture
def window_on_host(
    remote: Remote, make_window: Any, scripted_relay: ScriptedRelay, monkeypatch: pytest.MonkeyPatch
) -> Any:
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join(remote.host_argv))
    scripted_relay.on(lambda r: REVIEW in r.last_user_text, reviewer_leg)
    scripted_relay.on(lambda r: r.tool_role == "worker", worker_leg)

    def window_on(folder: Path) -> MainWindow:
        hosts = [RemoteHost(name="build", target=url(remote, folder))]
        settings = relay_settings(scripted_relay, hosts=hosts, approval_modes=AUTO)
        window: MainWindow = make_window(settings)
        return window

    return window_on


def choose_file(view: ChangesView, path: str) -> None:
    for row in range(view.files.topLevelItemCount()):
        item = view.files.topLevelItem(row)
        if item is not None and item.text(1) == path:
            view.files.setCurrentItem(item)
            return
    raise AssertionError(f"{path} is not listed")


async def click_and_wait(view: ChangesView, button: Any) -> str:
    """Click `button` (its work starts at once: the view is busy) and wait for its word."""
    button.click()
    assert not view.idle
    await wait_until(lambda: view.idle, 60)
    return html.unescape(view.status.text())


def folder_state(folder: Path) -> tuple[str, ...]:
    files = sorted(p for p in folder.rglob("*") if p.is_file() and ".git" not in p.parts)
    return (
        there_git(folder, "rev-parse", "HEAD"),
        there_git(folder, "status", "--porcelain"),
        *(f"{p.name}={p.read_text()}" for p in files),
    )


def test_a_host_workers_hunks_files_and_all_are_applied_there_and_reviewed_there(
    remote: Remote,
    window_on_host: Any,
    scripted_relay: ScriptedRelay,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder = git_folder_there(remote, "window-apply", {"a.txt": LINES, "c.txt": "c\n"})
    window = window_on_host(folder)
    manager = window.pane_manager
    said: dict[str, Any] = {}

    async def scenario() -> None:
        info, _ = await manager.start_worker("@build edit things", None, "tab")
        pane = manager.pane(info.id)
        assert isinstance(pane, AgentPane)
        await wait_until(lambda: "Wrote it." in pane.latest_reply(), 120)
        view = await open_view(window, info.id)
        view.resize(1100, 700)
        shown = [view.apply_file_button, view.apply_all_button, view.discard_file_button,
                 view.merge_button, view.discard_button, view.review_button]  # fmt: skip
        said["shown"] = [b.text() for b in shown if b.isVisibleTo(view)]
        choose_file(view, "a.txt")
        await wait_until(lambda: view.idle and len(view.diff.hunks) == 2, 30)
        said["hunk buttons"] = [h.button.isVisibleTo(view) for h in view.diff.hunks]
        # One hunk: the second.
        said["hunk"] = await click_and_wait(view, view.diff.hunks[1].button)
        said["after hunk"] = (folder / "a.txt").read_text()
        await wait_until(lambda: view.idle and not view.diff.hunks[1].button.isEnabled(), 30)
        said["marked"] = view.diff.hunks[1].button.text()
        # The file: what of it the folder there lacks.
        said["file"] = await click_and_wait(view, view.apply_file_button)
        said["after file"] = (folder / "a.txt").read_text()
        # The person edits c.txt there, where the worker did: Apply all changes nothing.
        (folder / "c.txt").write_text("c by the person\n")
        remote.server.give(folder)
        said["before all"] = folder_state(folder)
        said["all"] = await click_and_wait(view, view.apply_all_button)
        said["after all"] = folder_state(folder)
        assert view.grab().save(str(tmp_path / "changes-refused-there.png"))
        # Review: a read-only session whose tools read the worktree there.
        said["review"] = await click_and_wait(view, view.review_button)
        await wait_until(lambda: bool(view.diff.hunks) and view.diff.hunks[1].comments.text(), 30)
        said["comment"] = view.diff.hunks[1].comments.text()
        assert view.grab().save(str(tmp_path / "changes-applied-there.png"))
        said["send"] = view.send_button.isEnabled()
        # Discard file… undoes the worker's new file in its worktree there, asked first.
        choose_file(view, "b.txt")
        await wait_until(lambda: view.idle and view.current_path() == "b.txt", 30)
        said["discard asked"] = await choose(view, view.discard_file_button, DISCARD)
        said["discarded"] = html.unescape(view.status.text())
        said["files left"] = sorted(f.path for f in view.changes.files) if view.changes else []
        view.close()

    qloop.run_until_complete(asyncio.wait_for(scenario(), 300))
    assert said["shown"] == [
        "Apply file", "Apply all", "Discard file…", "Merge branch…", "Discard all…", "Review"
    ]  # fmt: skip
    assert said["hunk buttons"] == [True, True]
    assert said["hunk"].endswith(f"Applied to {folder}: 1 hunk of a.txt.</span>")
    assert said["after hunk"] == LINES.replace("line 19\n", "line 19 (worker)\n")
    assert said["marked"] == "In the main folder ✓"  # read there: the folder has it
    assert f"Applied to {folder}: 1 hunk of a.txt." in said["file"]
    assert said["after file"] == EDITED
    assert "overlaps your uncommitted edits to c.txt" in said["all"]
    assert "Nothing changed there." in said["all"]
    assert said["after all"] == said["before all"] and not (folder / "b.txt").exists()
    assert "Review: 1 findings on 1 hunks." in said["review"]
    assert "warning" in said["comment"] and ONLY_THERE in said["comment"]
    assert said["send"]
    assert "the new file b.txt" in said["discard asked"] and " on build;" in said["discard asked"]
    assert "Discarded in the worker's worktree: the new file b.txt." in said["discarded"]
    assert said["files left"] == ["a.txt", "c.txt"]
    reviews = [leg for leg in scripted_relay.legs_received if REVIEW in leg.last_user_text]
    assert len(reviews) == 2  # the read, then the findings
    assert "+line 19 (worker)" in reviews[0].last_user_text
    assert "read_file" in reviews[0].tool_names and "write_file" not in reviews[0].tool_names
