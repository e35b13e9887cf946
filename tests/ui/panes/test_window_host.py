"""The real window as a view of a real `melgui host` process: a worker pane's session
runs in the host, its approval reaches the window's queue, and "Keep running in the
background" leaves the turn going for the next view."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest

from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.host_view import view as host_view
from tests.fakes import ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import HostWindows, worker_noted
from tests.fakes.projects import git
from tests.fakes.window import keep_running_asked, wait_until


def worker_pane(window: Any) -> AgentPane:
    panes = [p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane)]
    assert len(panes) == 1
    return panes[0]


def test_a_worker_pane_runs_in_the_host_and_asks_the_window(
    host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any, project: Path
) -> None:
    scripted_relay.script(
        [text("On it."), tool_calls(tool_call("write_file", {"path": "n.txt", "content": "ok"}))],
        [text("Notes written."), done()],
    )
    window = host_windows.make()
    view = host_windows.view_only(window)

    async def scenario() -> None:
        window.pane_manager.spawn_agent("write notes", None, "right")
        pane = worker_pane(window)
        assert isinstance(pane.session, RemoteSession)
        await wait_until(lambda: window.approvals.first() is not None, timeout=30)
        request = window.approvals.first()
        assert request is not None and request.call.name == "write_file"
        request.approve()
        await wait_until(lambda: not pane.session.busy and pane.state.name == "idle", timeout=30)
        listed = await view.client.call("session/list")
        assert [s["id"] for s in listed] == [pane.session.session_id]

    run(scenario())
    assert (project / "n.txt").read_text() == "ok"
    pane = worker_pane(window)
    said = [m.content for m in pane.session.conversation.messages if m.role == "assistant"]
    assert said == ["On it.", "Notes written."]
    assert view.client.gaps == []


def test_keep_running_in_the_background_leaves_the_turn_to_the_host(
    host: HostProcess,
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    qtbot: Any,
) -> None:
    gate = threading.Event()
    scripted_relay.script([text("Started. "), hold(gate), text("Finished alone."), done()])
    window = host_windows.make()
    view = host_windows.view_only(window)

    async def start() -> str:
        window.pane_manager.spawn_agent("work long", None, "right")
        pane = worker_pane(window)
        await wait_until(lambda: "".join(pane.streaming) == "Started. ", timeout=30)
        remote = pane.session
        assert isinstance(remote, RemoteSession)
        return remote.session_id

    session_id = run(start())
    box, keep = keep_running_asked(window)  # asks: a worker is mid-turn
    assert keep.text() == "Keep running in the background"
    if "MELGUI_SHOTS_DIR" in os.environ:  # the README's screenshot of the quit question
        box.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / "keep-running.png"))
    keep.click()
    run(wait_until(lambda: not window.isVisible(), timeout=10))
    run(view.client.aclose())
    gate.set()

    async def next_view() -> dict[str, Any]:
        client = await host.client("next window")
        try:
            while True:
                listed = {s["id"]: s for s in await client.call("session/list")}
                if not listed[session_id]["busy"]:
                    break
                await asyncio.sleep(0.05)
            answer = await client.attach({session_id: None})
            return dict(answer[session_id]["snapshot"])
        finally:
            await client.aclose()

    snapshot = run(next_view())
    said = [m["content"] for m in snapshot["messages"] if m["role"] == "assistant"]
    assert said == ["Started. Finished alone."]

    # The next window attaches and shows it in a pane, the whole turn included.
    again, view = host_windows.open("window again")
    pane = worker_pane(again)
    assert isinstance(pane.session, RemoteSession)
    run(wait_until(lambda: len(pane.session.conversation.messages) == 2, timeout=30))
    assert [m.content for m in pane.session.conversation.messages] == [
        "work long",
        "Started. Finished alone.",
    ]
    assert pane.session.session_id == session_id and not pane.session.busy
    assert pane.state.name == "idle"
    assert "kept running are back in panes" in again.status.currentMessage()
    if "MELGUI_SHOTS_DIR" in os.environ:  # the README's screenshot of reattaching
        run(asyncio.sleep(0.3))
        again.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / "reattached.png"))


def test_a_worker_in_its_own_worktree_runs_in_the_host(
    host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any, project: Path
) -> None:
    for args in (("init", "-q"), ("add", "-A"), ("commit", "-q", "-m", "start")):
        git(project, *args)
    note = tool_call("write_file", {"path": "NOTES.md", "content": "notes\n"})
    scripted_relay.script([tool_calls(note)], [text("Noted."), done()])
    window = host_windows.make()
    view = host_windows.view_only(window)

    async def scenario() -> tuple[Path, str]:
        worker = await worker_noted(window)
        return worker.worktree, worker.session.session_id

    worktree, session_id = run(scenario())
    assert (worktree / "NOTES.md").read_text() == "notes\n"
    assert not (project / "NOTES.md").exists()
    assert session_id in [s["id"] for s in run(view.client.call("session/list"))]


def test_reopened_panes_paint_their_last_page_and_draw_the_rest_when_shown(
    host: HostProcess,
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(host_view, "REATTACH_PAGE", 2)  # two turns: more than a page
    scripted_relay.script(*[[text(f"Answer {n}."), done()] for n in range(4)])
    window = host_windows.make()

    async def two_sessions_of_two_turns() -> list[str]:
        client = await host.client("opener")
        folder, settings = window.project_folder(), {"connection": "relay"}
        settings["relay_url"] = scripted_relay.base_url
        ids = []
        try:
            for turn in range(0, 4, 2):
                opened = await client.call("session/open", folder=folder, settings=settings)
                for n in (turn, turn + 1):
                    await client.call("turn/prompt", session=opened["id"], text=f"ask {n}")
                    while not await _said(client, opened["id"], n):
                        await asyncio.sleep(0.05)
                ids.append(opened["id"])
        finally:
            await client.aclose()
        return ids

    ids = run(two_sessions_of_two_turns())
    host_windows.attach(window)
    pairs = [(i, p) for i, p in window.pane_manager.panes() if isinstance(p, AgentPane)]
    panes = [pane for _, pane in pairs]
    assert sorted(p.session.session_id for p in panes) == sorted(ids)
    front, behind = panes
    assert front.isVisible() and not behind.isVisible()  # a tab of its own, behind
    assert "Answer 1." in front.chat.transcript.toPlainText()
    assert behind.chat.transcript.toPlainText().strip() == ""  # drawn when shown
    # The rest of each conversation follows: the front pane draws it again.
    run(wait_until(lambda: not any(p.session.paged for p in panes), timeout=30))
    run(wait_until(lambda: "Answer 0." in front.chat.transcript.toPlainText(), timeout=10))
    assert len(behind.session.conversation.messages) == 4
    window.pane_manager.area.focus_pane(pairs[1][0].id)
    assert behind.isVisible()
    shown = behind.chat.transcript.toPlainText()
    assert "Answer 2." in shown and "Answer 3." in shown


async def _said(client: Any, session: str, n: int) -> bool:
    """The host's session has finished turn `n` (its answer is in the conversation)."""
    listed = {s["id"]: s for s in await client.call("session/list")}
    if listed[session]["busy"]:
        return False
    snapshot = (await client.call("session/attach", sessions={session: None}))[session]
    return any(m["content"] == f"Answer {n}." for m in snapshot["snapshot"]["messages"])
