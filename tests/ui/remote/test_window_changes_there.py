"""A remote folder's Changes view (over the real sshd): `/changes` shows the folder's
uncommitted changes there by file and hunk, read by the host there."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from melgui.host.remote_session import RemoteSession
from melgui.ui.changes.view import ChangesView
from tests.fakes import ScriptedRelay
from tests.fakes.projects import git
from tests.fakes.window import relay_settings, wait_until
from tests.remote.fixtures import Remote
from tests.ui.remote.conftest import WindowThere


def test_a_remote_folders_changes_view_shows_its_uncommitted_changes_there(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    qloop: asyncio.AbstractEventLoop,
    tmp_path: Path,
) -> None:
    folder = remote.folder("window-changes")
    (folder / "a.txt").write_text("first\n")
    mine = ("-c", "safe.directory=*")  # the folder is the remote user's
    git(folder, *mine, "init", "-q")
    git(folder, *mine, "add", "-A")
    git(folder, *mine, "commit", "-q", "-m", "start")
    (folder / "a.txt").write_text("first\nsecond there\n")
    (folder / "new.txt").write_text("made there\n")
    remote.server.give(folder)
    window = remote_window(f"ssh://{remote.server.alias}{folder}", relay_settings(scripted_relay))
    views: list[ChangesView | None] = []

    async def scenario() -> None:
        views.append(await window.reviews.open(window.chat))
        view = views[0]
        assert view is not None
        first = view.files.topLevelItem(0)
        assert first is not None
        view.files.setCurrentItem(first)
        await wait_until(lambda: view.diff.change is not None, 30)
        (folder / "b.txt").write_text("later\n")
        remote.server.give(folder)
        view.refresh()
        await wait_until(lambda: view.changes is not None and len(view.changes.files) == 3, 60)

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    view = views[0]
    assert view is not None and view.changes is not None
    assert view.grab().save(str(tmp_path / "changes-there.png"))
    assert str(view.changes.worktree.path) == str(folder)  # the folder there, not here
    files = [(f.path, f.status, f.added) for f in view.changes.files]
    assert files == [("a.txt", "modified", 1), ("b.txt", "added", 1), ("new.txt", "added", 1)]
    assert "+second there" in "\n".join(view.changes.file("a.txt").hunks[0].lines)
    assert view.diff.change is not None and view.diff.change.path == "a.txt"
    view.close()


def test_a_loop_there_folders_changes_view_shows_its_uncommitted_changes_there(
    remote: Remote,
    window_there: WindowThere,
    qloop: asyncio.AbstractEventLoop,
) -> None:
    # The window's main conversation runs in melgui's host there (`loop_there`): its
    # `/changes` reads the folder's changes there too, through that host, not this
    # machine's stand-in folder (which holds no repository).
    there = window_there("changes-loop-there", {"a.txt": "first\n"})
    folder, window = there.folder, there.window
    mine = ("-c", "safe.directory=*")
    git(folder, *mine, "init", "-q")
    git(folder, *mine, "add", "-A")
    git(folder, *mine, "commit", "-q", "-m", "start")
    (folder / "a.txt").write_text("first\nsecond there\n")
    remote.server.give(folder)
    views: list[ChangesView | None] = []

    async def scenario() -> None:
        await wait_until(
            lambda: isinstance(window.session, RemoteSession) and window.session.session_id, 120
        )
        views.append(await window.reviews.open(window.chat))

    qloop.run_until_complete(asyncio.wait_for(scenario(), 180))
    (view,) = views
    assert view is not None, window.chat.note_label.text()
    assert view.changes is not None
    assert str(view.changes.worktree.path) == str(folder)  # the folder there, not here
    assert [(f.path, f.status, f.added) for f in view.changes.files] == [("a.txt", "modified", 1)]
    assert "+second there" in "\n".join(view.changes.file("a.txt").hunks[0].lines)
    view.close()
