"""What a pane's header says in a window that attaches late to a real `melgui host`: the
state of the agent it shows (idle after its turn), not "running" as a new pane starts.
A real host process, real windows, the scripted relay and the scripted ACP agent."""

from __future__ import annotations

import asyncio
from typing import Any

from melgui.ui.panes.acp_pane import AcpPane
from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import HostWindows, open_acp_pane
from tests.fakes.window import wait_until


def header(window: Any, pane_id: int) -> str:
    frame = window.pane_manager.area.frame(pane_id)
    assert frame is not None
    return str(frame.state_label.text())


def late_panes(host_windows: HostWindows, kind: type) -> tuple[Any, list[tuple[Any, Any]]]:
    late = host_windows.make()
    host_windows.attach(late, "late window")
    return late, [(i, p) for i, p in late.pane_manager.panes() if isinstance(p, kind)]


def test_a_hosted_acp_agents_pane_in_a_late_window_says_idle(
    host_windows: HostWindows, run: Any
) -> None:
    _, _, pane = open_acp_pane(host_windows)
    pane.send('[{"say": "Done here."}]')
    run(wait_until(lambda: "Done here." in pane.latest_reply(), 30))
    run(wait_until(lambda: pane.state.name == "idle", 30))
    late, found = late_panes(host_windows, AcpPane)
    ((info, again),) = found
    run(wait_until(lambda: again.state.name == "idle", 10))
    assert late.pane_manager.info(info.id).state.name == "idle"
    assert "● idle" in header(late, info.id) and "running" not in header(late, info.id)


def test_a_workers_pane_in_a_window_that_reattaches_says_idle(
    host: HostProcess, host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any
) -> None:
    """A worker the host ran with no window, its turn ended: its pane comes back idle."""
    scripted_relay.script([text("Worked."), done()])
    window = host_windows.make()
    folder = window.project_folder()

    async def worker_with_no_window() -> None:
        client = await host.client("opener")
        settings = {"connection": "relay", "relay_url": scripted_relay.base_url}
        try:
            opened = await client.call(
                "session/open", folder=folder, settings=settings, source="worker"
            )
            await client.call("turn/prompt", session=opened["id"], text="work")
            while any(s["busy"] for s in await client.call("session/list")):
                await asyncio.sleep(0.05)
            await client.call("session/detach", session=opened["id"])
        finally:
            await client.aclose()

    run(worker_with_no_window())
    host_windows.attach(window)
    ((info, pane),) = [(i, p) for i, p in window.pane_manager.panes() if isinstance(p, AgentPane)]
    run(wait_until(lambda: "Worked." in pane.chat.transcript.toPlainText(), 30))
    assert pane.state.name == "idle" and window.pane_manager.info(info.id).state.name == "idle"
    assert "● idle" in header(window, info.id)
