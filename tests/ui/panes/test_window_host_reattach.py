"""A real window reattaching to a real `melgui host` process that ran a main conversation
and two workers with no window: the pane in front is built and painted before the main
conversation comes back and before the pane behind is built; the worker behind, which
asked a question with no window, asks it in the window's queue and on its card; every
conversation comes back whole, with no gap in the numbered changes."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent

from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.host_view import view as host_view
from melgui.ui.window.host_view.view import attach_host
from tests.fakes import ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import HostWindows
from tests.fakes.window import wait_until


def test_the_pane_in_front_paints_first_and_a_question_asked_meanwhile_waits_in_the_window(
    host: HostProcess,
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(host_view, "REATTACH_PAGE", 2)  # more than a page: paged, then whole
    write = tool_call("write_file", {"path": "asked.txt", "content": "yes"})
    scripted_relay.script(
        [text("Main answer."), done()],
        [text("Front answer."), done()],
        [text("Behind asks."), tool_calls(write)],
        [text("Written."), done()],
    )
    window = host_windows.make()
    folder = window.project_folder()

    async def sessions_with_no_window() -> dict[str, str]:
        client = await host.client("opener")
        settings = {"connection": "relay", "relay_url": scripted_relay.base_url}
        ids: dict[str, str] = {}
        try:
            for name, source in (("main", "main"), ("front", "worker"), ("behind", "worker")):
                opened = await client.call(
                    "session/open", folder=folder, settings=settings, source=source
                )
                ids[name] = opened["id"]
                await client.call("turn/prompt", session=opened["id"], text=f"ask {name}")
                while not await _settled(client, opened["id"]):
                    await asyncio.sleep(0.05)
                await client.call("session/detach", session=opened["id"])
        finally:
            await client.aclose()
        return ids

    ids = run(sessions_with_no_window())
    order: list[str] = []  # what the window did, in order: no clock
    panes = window.pane_manager

    def panes_changed() -> None:
        for _, pane in panes.panes():
            if isinstance(pane, AgentPane) and remote(pane).session_id not in order:
                order.append(remote(pane).session_id)
                pane.installEventFilter(painted)  # painted before what comes next?

    class Painted(host_view._FirstPaint):
        def eventFilter(self, watched: Any, event: Any) -> bool:
            if event.type() == QEvent.Type.Paint and "painted" not in order:
                order.append("painted")
            return False

    painted = Painted(asyncio.get_event_loop().create_future())
    panes.panesChanged.connect(panes_changed)
    window.sessionChanged.connect(lambda session: order.append(f"main {session.session_id}"))
    view = host_windows.attach(window)

    # The front pane first, painted; then the main conversation back; then the pane behind.
    assert order[:4] == [ids["front"], "painted", f"main {ids['main']}", ids["behind"]], order
    assert "main conversation is back" in window.status.currentMessage()
    main = window.session
    assert isinstance(main, RemoteSession) and main.session_id == ids["main"]
    by_id = {remote(p).session_id: p for _, p in panes.panes() if isinstance(p, AgentPane)}
    front, behind = by_id[ids["front"]], by_id[ids["behind"]]
    assert front.isVisible() and not behind.isVisible()
    assert "Front answer." in front.chat.transcript.toPlainText()

    # The question the worker behind asked with no window waits in the window's queue,
    # named after its pane, and its pane says it waits.
    run(wait_until(lambda: window.approvals.first() is not None, timeout=30))
    request = window.approvals.first()
    assert request is not None and request.call.name == "write_file"
    assert behind.pending_approvals() == [request]
    assert behind.state.name == "waiting"
    # Shown, its card asks it: the window's Allow key answers it there.
    pane_id = next(i.id for i, p in panes.panes() if p is behind)
    panes.area.focus_pane(pane_id)
    assert behind.isVisible() and behind.chat.answers.waiting(request.call.id) is not None
    assert window.approve_key()
    run(wait_until(lambda: (project / "asked.txt").exists() and not behind.session.busy, 30))
    assert (project / "asked.txt").read_text() == "yes"
    run(wait_until(lambda: "Written." in behind.chat.transcript.toPlainText(), timeout=30))

    # Every conversation whole (the page was 2 messages), each change once.
    sessions = [main, remote(front), remote(behind)]
    run(wait_until(lambda: not any(s.paged for s in sessions), timeout=30))
    assert [m.content for m in main.conversation.messages] == ["ask main", "Main answer."]
    assert [m.content for m in front.session.conversation.messages] == [
        "ask front",
        "Front answer.",
    ]
    said = [m.content for m in behind.session.conversation.messages if m.role == "assistant"]
    assert said == ["Behind asks.", "Written."]
    assert "Main answer." in window.chat.transcript.toPlainText()
    assert view.client.gaps == []


def remote(pane: AgentPane) -> RemoteSession:
    assert isinstance(pane.session, RemoteSession)
    return pane.session


async def _settled(client: Any, session: str) -> bool:
    """The host's session is idle, or waits for an answer."""
    listed = {s["id"]: s for s in await client.call("session/list")}
    return not listed[session]["busy"] or bool(listed[session]["approvals"])


def test_a_session_closed_while_the_window_reattaches_is_left_out(
    host: HostProcess, host_windows: HostWindows, run: Any, qtbot: Any
) -> None:
    window = host_windows.make()
    folder = window.project_folder()

    async def three_workers() -> list[str]:
        client = await host.client("opener")
        try:
            opened = [await client.call("session/open", folder=folder) for _ in range(3)]
            for session in opened:
                await client.call("session/detach", session=session["id"])
        finally:
            await client.aclose()
        return [session["id"] for session in opened]

    ids = run(three_workers())
    client = run(host.client("window"))
    listing = client.call

    async def call(method: str, **params: Any) -> Any:
        answer = await listing(method, **params)
        if method == "session/list":  # another view closes the second meanwhile
            other = await host.client("other view")
            try:
                await other.call("session/close", session=ids[1])
            finally:
                await other.aclose()
        return answer

    client.call = call
    run(attach_host(window, client))
    shown = [remote(p).session_id for _, p in window.pane_manager.panes()]
    assert shown == [ids[0], ids[2]]
    assert "2 agent(s) that kept running are back in panes" in window.status.currentMessage()
    assert client.gaps == []
