"""An ACP agent pane of the real window as a view of a real `melgui host` process
(`melgui --with-host`): the agent's program is the host's child and its ACP client runs
there; the pane draws the host's thread of it; its permission requests wait in the host
(answered in the window with the agent's own options, or in another view, and gone from
the other); Keep running in the background keeps it for the next window; a host killed
with -9 ends it, and the pane says so plainly."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from melgui.host.client import HostClient
from melgui.ui.panes.acp_pane import AcpPane
from melgui.ui.runtime.agent_in_host import ENDED, ENDED_HEADER, RemoteAgentSession
from tests.fakes.acp_host import agents_in, scripted_agent
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import Hosts, HostWindows, alive, open_acp_pane
from tests.fakes.window import click_card, keep_running_asked, wait_until

SHOTS = Path(os.environ.get("MELGUI_SHOTS_DIR") or "/tmp")
ASK = [{"say": "I will clean the build."}, {"ask": "execute", "title": "rm -rf build"}]


def steps(*items: dict[str, Any]) -> str:
    return json.dumps(list(items))


@pytest.fixture
def host(hosts: Hosts) -> HostProcess:
    """The windows' host: the first of `hosts`."""
    return hosts.first


def acp_panes(window: Any) -> list[AcpPane]:
    return [p for _, p in window.pane_manager.panes() if isinstance(p, AcpPane)]


def in_host(pane: AcpPane) -> RemoteAgentSession:
    assert isinstance(pane.acp, RemoteAgentSession)
    return pane.acp


def test_an_acp_pane_runs_its_agent_in_the_host_and_asks_in_any_view(
    hosts: Hosts, host_windows: HostWindows, run: Any, qtbot: Any, project: Path
) -> None:
    window, _, pane = open_acp_pane(host_windows, size=(1300, 800))

    async def ready() -> None:
        await wait_until(lambda: bool(pane.agent.state.commands), 30)
        assert pane.mode_box.currentText() == "Ask" and pane.model_box.currentText() == "Small"
        pane.model_box.setCurrentIndex(1)  # asked of the agent through the host
        pane.model_box.activated.emit(1)
        await wait_until(lambda: pane.agent.state.model == "m-large", 20)

    run(ready())
    assert list(agents_in(project).values()) == [
        hosts.first_pid
    ]  # the host's child, not the window's
    assert "scripted 1.0" in pane.info.text() and "commands under /" in pane.info.text()

    # A permission request waits in the host; the window answers it with the agent's own
    # option on the pane's card.
    pane.send(steps(*ASK))
    run(wait_until(lambda: window.approvals.first() is not None, 30))
    request = window.approvals.first()
    assert request is not None and request.call.name == "execute"
    assert [o.label for o in request.options] == ["Yes, once", "Yes, always", "No", "Never"]
    assert pane.state.name == "waiting"
    card = pane.chat.transcript.card_html(request.call.id)
    assert "&nbsp;&nbsp;Yes, once&nbsp;&nbsp;" in card
    run(wait_until(lambda: "I will clean the build." in pane.chat.transcript.toPlainText(), 10))
    qtbot.wait(200)
    pane.grab().save(str(SHOTS / "acp-pane-in-host.png"))
    click_card(pane.chat.transcript, request.call.id, "choose", "0")
    assert request.chosen == "yes"
    run(wait_until(lambda: "permission:yes" in pane.latest_reply(), 30))
    run(wait_until(lambda: pane.state.name == "idle", 30))
    assert window.approvals.first() is None

    # Another view answers the next one: it goes from the window's queue and card.
    other: HostClient = run(hosts.first.client("other view"))
    run(other.attach({in_host(pane).session_id: None}))
    pane.send(steps(ASK[1]))
    run(wait_until(lambda: window.approvals.first() is not None, 30))
    second = window.approvals.first()
    assert second is not None
    answer = {"call": second.call.id, "decision": "deny", "option": "no"}
    answered = run(other.call("approval/answer", session=in_host(pane).session_id, **answer))
    assert answered == {"answered": True}
    run(wait_until(lambda: window.approvals.first() is None and not second.pending, 30))
    run(wait_until(lambda: "permission:no" in pane.latest_reply(), 30))
    run(other.aclose())
    said = [m.content for m in pane.acp.conversation.messages if m.role == "assistant"]
    assert any("permission:yes" in text for text in said)
    client = in_host(pane).client
    assert isinstance(client, HostClient) and client.gaps == []


def test_keep_running_in_the_background_brings_the_acp_pane_back(
    host_windows: HostWindows, run: Any, qtbot: Any, project: Path
) -> None:
    window, _, pane = open_acp_pane(host_windows)
    pids = set(agents_in(project))
    session_id = in_host(pane).session_id
    pane.send(steps(*ASK))
    run(wait_until(lambda: window.approvals.first() is not None, 30))

    _, keep = keep_running_asked(window)  # asks: the agent waits for an answer
    keep.click()
    run(wait_until(lambda: not window.isVisible(), timeout=10))

    again = host_windows.make()
    again.resize(1300, 800)
    host_windows.attach(again, "window again")
    back = acp_panes(again)
    assert len(back) == 1 and isinstance(back[0].acp, RemoteAgentSession)
    pane = back[0]
    assert in_host(pane).session_id == session_id and set(agents_in(project)) == pids
    assert "kept running are back in panes" in again.status.currentMessage()
    run(wait_until(lambda: again.approvals.first() is not None, 30))
    request = again.approvals.first()
    assert request is not None and request.call.name == "execute" and request.options
    again.pane_manager.area.focus_pane(again.pane_manager.panes()[0][0].id)
    run(wait_until(lambda: "I will clean the build." in pane.chat.transcript.toPlainText(), 10))
    assert pane.agent.state.commands and pane.mode_box.currentText() == "Ask"
    run(wait_until(lambda: "Yes, once" in pane.chat.transcript.card_html(request.call.id), 10))
    qtbot.wait(200)
    again.grab().save(str(SHOTS / "acp-pane-reattached.png"))
    request.choose("always")
    run(wait_until(lambda: "permission:always" in pane.latest_reply(), 30))
    run(wait_until(lambda: pane.state.name == "idle", 30))


def test_a_host_killed_ends_the_acp_pane_and_says_so(
    hosts: Hosts, host_windows: HostWindows, run: Any, qtbot: Any, project: Path
) -> None:
    window, view, pane = open_acp_pane(host_windows, size=(1300, 800))
    agent = list(agents_in(project))
    assert len(agent) == 1
    pane.send(steps(*ASK))
    run(wait_until(lambda: window.approvals.first() is not None, 30))
    request = window.approvals.first()
    assert request is not None

    hosts.first.kill()
    run(wait_until(lambda: view.restarts == 1 and pane.state.name == "failed", 60))
    hosts.note(view.client)
    run(wait_until(lambda: not alive(agent[0]), 30))  # the agent ended with its host
    run(wait_until(lambda: ENDED in pane.chat.transcript.toPlainText(), 30))
    assert pane.failure.isVisibleTo(pane) and pane.failure.text() == ENDED_HEADER
    card = pane.chat.transcript.card_html(request.call.id)  # no answer waits any more
    assert "interrupted" in card and "Yes, once" not in card
    assert window.approvals.first() is None
    listed = run(view.client.call("session/list"))  # the new host did not take it over
    assert [s["source"] for s in listed] == ["main"] and not any(s.get("agent") for s in listed)
    qtbot.wait(200)
    pane.grab().save(str(SHOTS / "acp-pane-host-killed.png"))
    # What is sent now fails in words, never hangs.
    pane.send(steps({"say": "hello?"}))
    run(wait_until(lambda: pane.state.name == "failed" and not pane.acp.busy, 30))


def test_an_agent_in_the_host_that_asks_to_sign_in_shows_its_methods(
    hosts: Hosts, host_windows: HostWindows, run: Any, project: Path
) -> None:
    window, _ = host_windows.open()
    info = window.pane_manager.open_agent(
        scripted_agent("--auth"), "tab", task=steps({"say": "in"})
    )
    pane = window.pane_manager.pane(info.id)
    assert isinstance(pane, AcpPane) and isinstance(pane.acp, RemoteAgentSession)

    async def signed_in() -> None:
        await wait_until(lambda: bool(pane.sign_in), 30)
        assert [b.text() for b in pane.sign_in] == ["Paste a token"]
        assert "asks you to sign in" in pane.info.text()
        pane.sign_in[0].click()  # agent/sign_in: the host signs in and opens its session
        await wait_until(lambda: pane.latest_reply() == "in", 30)  # the first task, sent

    run(signed_in())
    assert pane.sign_in == [] and pane.agent.state.session_id == "s1"
    assert list(agents_in(project).values()) == [hosts.first_pid]


def test_a_window_closed_with_an_idle_agent_ends_it_in_the_host(
    hosts: Hosts, host_windows: HostWindows, run: Any, project: Path
) -> None:
    window, _, _ = open_acp_pane(host_windows)
    assert len(agents_in(project)) == 1
    window.close()  # nothing runs: no question, the pane's session is closed in the host
    run(wait_until(lambda: not window.isVisible(), timeout=10))

    async def listed() -> list[dict[str, Any]]:
        client = await hosts.first.client("after the window")
        try:
            return [s for s in await client.call("session/list") if s.get("agent")]
        finally:
            await client.aclose()

    run(wait_until(lambda: not agents_in(project), 30))
    assert run(listed()) == []
