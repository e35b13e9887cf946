"""A remote folder's review asks with the project's own review prompt as it is there: its
`.melgui/review.md` is read in the folder there, by the host there, not from a path of
the same name on this machine (over the real sshd)."""

from __future__ import annotations

import asyncio
import os
import shlex
from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from melgui.host.remote_session import RemoteSession
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.changes.view import ChangesView
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.projects import git
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote, git_folder_there, url
from tests.ui.remote.conftest import WindowThere

THERE = "Review as the folder there asks: name the ticket."
HERE = "Review as the copy on this machine says."


def test_a_remote_folders_review_reads_its_review_prompt_there(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The folder there is `real` as melgui's host there sees it at `shown`'s path (a bind
    # mount around that host): this machine's `shown` holds another review.md.
    real = remote.folder("review-real", {"a.txt": "first\n"})
    (real / ".melgui").mkdir()
    (real / ".melgui" / "review.md").write_text(THERE)
    mine = ("-c", "safe.directory=*")
    git(real, *mine, "init", "-q")
    git(real, *mine, "add", "a.txt")
    git(real, *mine, "commit", "-q", "-m", "start")
    (real / "a.txt").write_text("first\nsecond there\n")
    remote.server.give(real)
    shown = remote.folder("review-shown")
    (shown / ".melgui").mkdir()
    (shown / ".melgui" / "review.md").write_text(HERE)
    remote.server.give(shown)
    runtime = remote.folder("review-runtime")  # a host of this test's own, in the mount
    os.chmod(runtime, 0o700)
    environment, *host = remote.host_argv
    assert environment == "env"
    argv = ["bwrap", "--dev-bind", "/", "/", "--bind", str(real), str(shown), "--",
            "env", "-u", "XDG_RUNTIME_DIR", f"TMPDIR={runtime}", *host]  # fmt: skip
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join(argv))
    scripted_relay.script([text("a.txt:2: note: name the ticket"), done()])
    window = remote_window(url(remote, shown), relay_settings(scripted_relay))

    async def scenario() -> None:
        await wait_until(lambda: window.reviews.session is not None, 30)
        window.reviews.start("")
        await wait_until(lambda: bool(scripted_relay.legs_received), 120)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    (leg,) = scripted_relay.legs_received
    assert leg.last_user_text.startswith(THERE)
    assert "+second there" in leg.last_user_text  # the change there, read there


def test_a_remote_folders_review_of_its_last_commits_and_a_branch_runs_there(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
) -> None:
    # `/review last N` and `/review BRANCH`: git diff runs in the folder there, by its
    # host, and the review asks with the folder's own review.md there (this machine's
    # stand-in folder holds no repository and no review.md).
    folder = git_folder_there(remote, "review-targets", {"a.txt": "first\n"})
    mine = ("-c", "safe.directory=*")
    (folder / "a.txt").write_text("first\nsecond commit there\n")
    git(folder, *mine, "commit", "-q", "-am", "second")
    git(folder, *mine, "checkout", "-q", "-b", "feature")
    (folder / "b.txt").write_text("on the branch there\n")
    git(folder, *mine, "add", "b.txt")
    git(folder, *mine, "commit", "-q", "-m", "feature")
    git(folder, *mine, "checkout", "-q", "-")
    (folder / ".melgui").mkdir()
    (folder / ".melgui" / "review.md").write_text(THERE)
    remote.server.give(folder)
    scripted_relay.script(
        [text("a.txt:2: warning: the second line there"), done()],
        [text("b.txt:1: note: the branch's file"), done()],
    )
    window = remote_window(url(remote, folder), relay_settings(scripted_relay))
    reviews = reviewed_in(window, scripted_relay)

    async def scenario() -> None:
        await wait_until(lambda: window.reviews.session is not None, 30)
        await reviews("last 1", 1)
        await reviews("feature", 2)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    last, branch = scripted_relay.legs_received
    assert last.last_user_text.startswith(THERE)  # the folder's review.md there
    assert "+second commit there" in last.last_user_text  # git diff HEAD~1 HEAD there
    assert "on the branch" not in last.last_user_text
    assert branch.last_user_text.startswith(THERE)
    assert "+on the branch there" in branch.last_user_text  # HEAD...feature there
    assert "second commit" not in branch.last_user_text
    shown = window.chat.transcript.toPlainText()
    assert "line 2: warning: the second line there" in shown
    assert "line 1: note: the branch's file" in shown


def reviewed_in(window: Any, relay: ScriptedRelay) -> Callable[[str, int], Awaitable[None]]:
    """`await reviewed(target, count)`: `/review target` in `window`, until the chat says
    its `count`th review's findings, or that it cannot review (then: fail, saying why)."""

    async def reviewed(target: str, count: int) -> None:
        window.reviews.start(target)
        chat, note = window.chat.transcript, window.chat.note_label
        await wait_until(
            lambda: "Cannot" in note.text() or chat.toPlainText().count("Review: ") >= count,
            120,
        )
        assert "Cannot" not in note.text(), note.text()
        assert len(relay.legs_received) == count

    return reviewed


def test_a_loop_there_folders_reviews_run_there(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    window_there: WindowThere,
    qloop: asyncio.AbstractEventLoop,
) -> None:
    # The window's main conversation runs in melgui's host there (`loop_there`): its
    # `/review last 1` and its `/review` of the uncommitted changes read the diff and
    # review.md there too, through that host (not this machine's stand-in folder); the
    # findings' new worker runs there, and its pane says so.
    there = window_there("review-loop-there", {"a.txt": "first\n"})
    folder, window = there.folder, there.window
    mine = ("-c", "safe.directory=*")
    git(folder, *mine, "init", "-q")
    git(folder, *mine, "add", "-A")
    git(folder, *mine, "commit", "-q", "-m", "start")
    (folder / "a.txt").write_text("first\nsecond commit there\n")
    git(folder, *mine, "commit", "-q", "-am", "second")
    (folder / ".melgui").mkdir()
    (folder / ".melgui" / "review.md").write_text(THERE)
    remote.server.give(folder)
    scripted_relay.script(
        [text("a.txt:2: warning: the second line there"), done()],
        [text("a.txt:3: note: the uncommitted line there"), done()],
        [text("Fixing it there."), done()],
    )
    reviewed = reviewed_in(window, scripted_relay)

    async def scenario() -> None:
        await wait_until(
            lambda: isinstance(window.session, RemoteSession) and window.session.session_id, 120
        )
        await reviewed("last 1", 1)
        (folder / "a.txt").write_text("first\nsecond commit there\nuncommitted there\n")
        remote.server.give(folder)
        await reviewed("", 2)
        # Its findings go to a new worker, which runs in the host there too: its pane
        # names that machine.
        (view,) = window.findChildren(ChangesView)
        view.send_findings()
        await wait_until(lambda: len(window.pane_manager.panes()) == 1, 30)
        ((_, pane),) = window.pane_manager.panes()
        await wait_until(lambda: "Fixing it there." in pane.chat.transcript.toPlainText(), 120)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    last, uncommitted, fixing = scripted_relay.legs_received
    assert "the uncommitted line there" in fixing.last_user_text
    ((info, pane),) = window.pane_manager.panes()
    assert isinstance(pane.session, RemoteSession)  # its loop there
    assert info.where == remote.server.alias, info
    assert last.last_user_text.startswith(THERE)
    assert "+second commit there" in last.last_user_text
    assert uncommitted.last_user_text.startswith(THERE)
    assert "+uncommitted there" in uncommitted.last_user_text
    shown = window.chat.transcript.toPlainText()
    assert "line 2: warning: the second line there" in shown
    assert "Review: 1 findings on 1 hunks of the uncommitted changes" in shown
