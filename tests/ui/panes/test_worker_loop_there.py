"""A configured host with `loop_there` (Settings.hosts): a worker sent to it by `@NAME`
runs as a RemoteSession in melgui's host there, reached through a local command that
behaves like `docker exec -i box` (tests/remote/local_target.py). Its loop reaches the
model from there with the window's key (the relay refuses any other, and the box has a
key of its own); its pane works as a local host's worker pane does: its approval reaches
the window's queue here and the answer travels there; the chat says where the loop runs
and that the key is in that host's memory. A window whose model is a local one cannot
run a loop there, and says so."""

from __future__ import annotations

import asyncio
import os
import shlex
import sys
from pathlib import Path
from typing import Any

import pytest

from melgui.core.config.settings import RemoteHost, Settings
from melgui.core.thread.entries import NoteEntry
from melgui.host.client import HostClient
from melgui.host.place import HostPlace
from melgui.host.remote_session import RemoteSession
from melgui.remote.connect import HOST_COMMAND_ENV
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.panes.manager import PaneError
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.projects import git
from tests.fakes.window import relay_settings, wait_until
from tests.remote.local_target import ROOT, box_host

KEY = "sk-window-key-0123456789abc"


def box(tmp_path: Path) -> tuple[RemoteHost, Path, Path]:
    folder, runtime, home = tmp_path / "in-the-box", tmp_path / "run", tmp_path / "box-home"
    folder.mkdir()
    home.mkdir()
    there = (
        f"env MELIAI_API_KEY=the-box-own-key XDG_RUNTIME_DIR={runtime} PYTHONPATH={ROOT} "
        f"HOME={home} MELGUI_CONFIG_DIR={home / 'config'} MELGUI_DATA_DIR={home / 'data'}"
    )
    host = RemoteHost(name="box", target=there, folder=str(folder), loop_there=True)
    return host, folder, runtime


def test_a_worker_on_a_loop_there_host_runs_there_with_the_window_key(
    make_window: Any,
    run: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join([sys.executable, "-m", "melgui", "host"]))
    host, folder, runtime = box(tmp_path)
    relay = ScriptedRelay(api_key=KEY)
    relay.script(
        [text("Writing."), tool_calls(tool_call("write_file", {"path": "b.txt", "content": "x"}))],
        [text("Wrote it."), done()],
    )
    with relay, box_host(runtime):
        window = make_window(relay_settings(relay, hosts=[host]), api_key=KEY)

        async def scenario() -> list[dict[str, Any]]:
            info, _ = await window.pane_manager.start_worker("@box write b", None, "right")
            pane = window.pane_manager.pane(info.id)
            assert isinstance(pane, AgentPane) and isinstance(pane.session, RemoteSession)
            await wait_until(lambda: window.approvals.first() is not None, timeout=60)
            request = window.approvals.first()
            assert request is not None and request.call.name == "write_file"
            request.approve()  # here; the answer travels there
            await wait_until(lambda: "Wrote it." in pane.latest_reply(), timeout=60)
            await wait_until(lambda: not pane.session.busy and pane.state.name == "idle", 30)
            if "MELGUI_SHOTS_DIR" in os.environ:
                shots = Path(os.environ["MELGUI_SHOTS_DIR"])
                window.grab().save(str(shots / "worker-loop-there.png"))
            direct = await HostClient.connect(HostPlace(runtime / "melgui"), client="test")
            try:
                listed: list[dict[str, Any]] = await direct.call("session/list")
            finally:
                await direct.aclose()
            return listed

        listed = run(scenario())
        pane = window.pane_manager.pane(1)
        assert isinstance(pane, AgentPane)
        session = pane.session
        assert isinstance(session, RemoteSession)
    assert [s["id"] for s in listed] == [session.session_id]  # its loop ran in the box
    assert listed[0]["folder"] == str(folder)
    assert (folder / "b.txt").read_text() == "x"
    assert [r.authorization for r in relay.legs_received] == [f"Bearer {KEY}"] * 2
    [note] = [e for e in session.thread.entries if isinstance(e, NoteEntry)]
    assert "kept in the memory of melgui's host there only" in note.text
    assert "kept in the memory" in pane.chat.transcript.toPlainText()
    assert window.pane_manager.registry.get(1).where == "box"  # list_panes says where


def test_a_local_model_cannot_run_its_loop_there_and_says_so(
    make_window: Any, run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join([sys.executable, "-m", "melgui", "host"]))
    host, _, runtime = box(tmp_path)
    window = make_window(Settings(connection="local", hosts=[host]))

    async def scenario() -> str:
        try:
            await window.pane_manager.start_worker("@box write b", None, "right")
        except PaneError as exc:
            return str(exc)
        return ""

    with box_host(runtime):
        said = run(asyncio.wait_for(scenario(), 60))
    assert "needs a model server" in said and "local one, on this machine" in said


def test_a_loop_there_worker_in_a_git_folder_works_in_its_own_worktree_there(
    make_window: Any, run: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(HOST_COMMAND_ENV, shlex.join([sys.executable, "-m", "melgui", "host"]))
    host, folder, runtime = box(tmp_path)
    (folder / "a.txt").write_text("first\n")
    for args in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "start"]):
        git(folder, *args)
    relay = ScriptedRelay(api_key=KEY)
    relay.script(
        [tool_calls(tool_call("write_file", {"path": "b.txt", "content": "x"}))],
        [text("Wrote it."), done()],
    )
    with relay, box_host(runtime):
        window = make_window(relay_settings(relay, hosts=[host]), api_key=KEY)

        async def scenario() -> AgentPane:
            info, _ = await window.pane_manager.start_worker("@box write b", None, "right")
            pane = window.pane_manager.pane(info.id)
            assert isinstance(pane, AgentPane) and isinstance(pane.session, RemoteSession)
            await wait_until(lambda: window.approvals.first() is not None, timeout=60)
            request = window.approvals.first()
            assert request is not None
            request.approve()
            await wait_until(lambda: "Wrote it." in pane.latest_reply(), timeout=60)
            return pane

        pane = run(scenario())
        assert pane.worktree_there is not None
        worktree = pane.worktree_there.worktree
    # Closed after the host there stopped: the link's supervisor may be ending the dead
    # connection just then, and the close must not wait on it (3.11's wait_for lost the
    # close's cancel there, and the supervisor reconnected and pinged forever).
    run(window.aclose())
    assert worktree.branch == "melgui/1-write-b"
    assert worktree.path.is_relative_to(tmp_path / "box-home" / "data" / "worktrees")
    assert pane.session.loop.cwd == str(worktree.path)  # the host's loop works in it
    assert (worktree.path / "b.txt").read_text() == "x"
    assert not (folder / "b.txt").exists()
