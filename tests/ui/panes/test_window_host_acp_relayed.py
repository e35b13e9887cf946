"""What an ACP agent the melgui host runs shows in the window besides its chat, as an agent
of the window's own does: its plan in the plans panel and its terminals in tabs under
the chat (their output, and how each ended), carried by the host's `plan` and
`terminal*` records, and by a snapshot for a window that attaches later. A real host
process, the scripted ACP agent (tests/fakes/acp_scripted_agent.py) its child, real
windows."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from melgui.host.client import HostClient
from melgui.ui.panes.acp_pane import AcpPane
from melgui.ui.runtime.agent_in_host import RemoteAgentSession
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import Hosts, HostWindows, open_acp_pane
from tests.fakes.window import wait_until

SHOTS = Path(os.environ.get("MELGUI_SHOTS_DIR") or "/tmp")
PLAN = [["clean build", "completed"], ["run the tests", "in_progress"], ["report", "pending"]]
# A command in the agent's terminal: its output, then an exit code that is not 0.
RUN = ["sh", "-c", "printf 'collecting\\n3 passed, 1 failed\\n'; exit 3"]
TURN = json.dumps([{"plan": PLAN}, {"run": RUN}, {"say": "The tests ran."}])


@pytest.fixture
def host(hosts: Hosts) -> HostProcess:
    """The windows' host: the first of `hosts` (another view connects to it too)."""
    return hosts.first


def screen(pane: AcpPane, terminal_id: str = "term-1") -> str:
    view = pane.terminal_views.get(terminal_id)
    return view.emulator.screen_text() if view is not None else ""


def tab_text(pane: AcpPane) -> str:
    return pane.terminal_tabs.tabText(0) if pane.terminal_tabs.count() else ""


def shown_in_full(window: Any, pane: AcpPane) -> None:
    """The plan in the plans panel, the terminal's output and its end in its tab."""
    plans = window.plans_panel.plans
    assert plans and plans[-1][0] == "scripted: plan"
    assert plans[-1][1].splitlines() == [
        "- [x] clean build",
        "- [~] run the tests",
        "- [ ] report",
    ]
    assert list(pane.terminal_views) == ["term-1"] and pane.terminal_tabs.isVisibleTo(pane)
    assert "3 passed, 1 failed" in screen(pane)
    assert tab_text(pane).startswith("sh -c") and tab_text(pane).endswith("· exit 3")


def test_a_hosted_agents_plan_and_terminal_show_in_the_window_and_a_late_one(
    host_windows: HostWindows, run: Any, qtbot: Any
) -> None:
    window, _, pane = open_acp_pane(host_windows, size=(1300, 800))
    pane.send(TURN)
    run(wait_until(lambda: "The tests ran." in pane.latest_reply(), 30))
    run(wait_until(lambda: pane.state.name == "idle", 30))
    run(wait_until(lambda: "exit 3" in tab_text(pane), 10))
    shown_in_full(window, pane)
    said = [m.content for m in pane.acp.conversation.messages if m.role == "assistant"]
    assert any("exit 3:collecting" in text for text in said)  # the agent read it too
    window.side_panel.reveal("plans")
    qtbot.wait(300)
    window.grab().save(str(SHOTS / "acp-hosted-plan-terminal.png"))

    # A second window attaches later: the pane it opens on the agent shows the same,
    # from the host's snapshot (the records went before it came).
    late = host_windows.make()
    late.resize(1700, 850)
    host_windows.attach(late, "late window")
    panes = [p for _, p in late.pane_manager.panes() if isinstance(p, AcpPane)]
    assert len(panes) == 1 and isinstance(panes[0].acp, RemoteAgentSession)
    again = panes[0]
    assert again.acp.session_id == pane.acp.session_id
    run(wait_until(lambda: "3 passed, 1 failed" in screen(again), 10))
    shown_in_full(late, again)
    assert len(late.plans_panel.plans) == 1  # shown once, not once per snapshot taken
    late.pane_manager.area.focus_pane(late.pane_manager.panes()[0][0].id)
    late.side_panel.reveal("plans")
    qtbot.wait(300)
    late.grab().save(str(SHOTS / "acp-hosted-plan-terminal-late.png"))
    again.grab().save(str(SHOTS / "acp-hosted-terminal-tab-late.png"))

    # The next plan reaches both windows as a record.
    done = [[step, "completed"] for step, _ in PLAN]
    pane.send(json.dumps([{"plan": done}, {"say": "All done."}]))
    for each in (window, late):
        run(wait_until(lambda w=each: "- [x] report" in w.plans_panel.plans[-1][1], 30))


def test_a_terminals_output_comes_bounded_and_its_tail_in_a_snapshot(
    hosts: Hosts, host_windows: HostWindows, run: Any
) -> None:
    """A terminal that floods: the views get at most FRAME_MAX bytes of it a record, the
    snapshot its last TAIL characters, and the screen its last lines."""
    _, _, pane = open_acp_pane(host_windows)
    session = pane.acp
    assert isinstance(session, RemoteAgentSession)
    flood = ["sh", "-c", "seq 1 200000; echo end-of-flood"]
    pane.send(json.dumps([{"run": flood}, {"say": "flooded"}]))
    run(wait_until(lambda: "flooded" in pane.latest_reply(), 60))
    run(wait_until(lambda: "end-of-flood" in screen(pane), 10))
    from melgui.desk.hosted_agents.relayed import FRAME_MAX, TAIL

    client: HostClient = run(hosts.first.client("another view"))
    try:
        said = run(client.attach({session.session_id: 0}))[session.session_id]["changes"]
        snapshot = run(client.attach({session.session_id: None}))[session.session_id]
    finally:
        run(client.aclose())
    output = [r for r in said if r["type"] == "terminal_output"]
    assert output and all(len(r["text"].encode()) <= FRAME_MAX for r in output)
    assert [r["type"] for r in said if r["type"].startswith("terminal")][-1] == "terminal_exit"
    (terminal,) = snapshot["snapshot"]["agent"]["terminals"]
    assert terminal["exit"] == {"code": 0, "signal": None} and terminal["cut"] is True
    assert len(terminal["tail"]) <= TAIL and terminal["tail"].endswith("end-of-flood\r\n")
    assert not any(r["type"].startswith("terminal") for r in snapshot["snapshot"]["tail"])


def test_keys_typed_in_a_hosted_agents_terminal_tab_reach_its_program(
    host_windows: HostWindows, run: Any, qtbot: Any
) -> None:
    """As in a tab of the window's own agent: a command that asks (here `read`) gets
    what the person types in its tab, through the host."""
    from PySide6.QtCore import Qt

    _, _, pane = open_acp_pane(host_windows)
    asks = ["sh", "-c", "printf 'name? '; read answer; echo got:$answer"]
    pane.send(json.dumps([{"run": asks}, {"say": "asked"}]))
    run(wait_until(lambda: "name?" in screen(pane), 30))
    view = pane.terminal_views["term-1"]
    qtbot.keyClicks(view, "melgui")
    qtbot.keyClick(view, Qt.Key.Key_Return)
    run(wait_until(lambda: "asked" in pane.latest_reply(), 30))
    assert "got:melgui" in pane.latest_reply() and "got:melgui" in screen(pane)
    run(wait_until(lambda: tab_text(pane).endswith("· exit 0"), 10))
    qtbot.keyClicks(view, "more")  # the program ended: nothing is sent, nothing fails
    run(wait_until(lambda: pane.state.name == "idle", 10))
    assert not pane.acp.problem
