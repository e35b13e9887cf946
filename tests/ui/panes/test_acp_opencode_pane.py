"""A real third-party ACP agent, OpenCode (offline, on the scripted OpenAI server), in an
agent pane of the real main window: its edit's permission request waits in the window's
one approval queue, named by the pane, with OpenCode's own options; answering there lets
the edit happen and the turn end."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from pytestqt.qtbot import QtBot

from melgui.ui.panes.acp_pane import AcpPane
from melgui.ui.runtime.qt_loop import QtEventLoop
from tests.fakes import ScriptedOpenAI, ScriptedRelay, done, text, tool_call, tool_calls
from tests.fakes.third_party_agents import answer_titles, opencode_agent
from tests.fakes.window import click_card, relay_settings, wait_until

LIMIT = 90  # seconds; OpenCode starts slowly on a busy machine
PATCH = "*** Begin Patch\n*** Add File: hello.txt\n+Hello world\n*** End Patch"
SHOTS = os.environ.get("MELGUI_SCREENSHOTS")  # a folder: docs/ when refreshing the README's


def test_opencodes_approval_waits_in_the_main_queue(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    scripted_openai: ScriptedOpenAI,
    make_window: Any,
    qloop: QtEventLoop,
    project: Path,
) -> None:
    def run(step: Coroutine[Any, Any, None]) -> None:
        """Like the `run` fixture, with room for OpenCode's slow start."""
        qloop.run_until_complete(asyncio.wait_for(step, 2 * LIMIT))

    answer_titles(scripted_openai)
    scripted_openai.script(
        [
            text("I will add hello.txt with a greeting."),
            tool_calls(tool_call("apply_patch", {"patchText": PATCH}, id="c1")),
        ],
        [text("Added hello.txt."), done()],
    )
    agent = opencode_agent(scripted_openai, project.parent)
    assert agent.cwd == project
    window = make_window(relay_settings(scripted_relay))
    window.resize(1400, 860)
    manager = window.pane_manager
    info = manager.open_agent(agent.command(), "right")
    pane = manager.pane(info.id)
    assert isinstance(pane, AcpPane)

    async def asked() -> None:
        await wait_until(lambda: pane.state.name == "idle", LIMIT)
        pane.send("Add a hello.txt that greets the world.")
        await wait_until(lambda: window.approvals.first() is not None, LIMIT)

    run(asked())
    request = window.approvals.first()
    assert request is not None and request.source == info.title == "opencode 1"
    assert request.call.name == "edit" and request is pane.pending_approvals()[0]
    card = pane.chat.transcript.card_html(request.call.id)  # answered on its card
    # OpenCode's own three options, kept as offered.
    assert [o.kind for o in request.options] == ["allow_once", "allow_always", "reject_once"]
    for label in ("Allow once", "Always allow", "Reject"):
        assert f"&nbsp;&nbsp;{label}&nbsp;&nbsp;" in card
    assert pane.state.name == "waiting"
    assert not (project / "hello.txt").exists()
    qtbot.wait(300)
    if SHOTS:
        window.grab().save(os.path.join(SHOTS, "screenshot-acp-opencode.png"))

    click_card(pane.chat.transcript, request.call.id, "choose", "0")  # OpenCode's "Allow once"

    async def answered() -> None:
        await wait_until(lambda: "Added hello.txt." in pane.latest_reply(), LIMIT)
        await wait_until(lambda: pane.state.name == "idle", LIMIT)

    run(answered())
    assert window.approvals.first() is None
    assert (project / "hello.txt").read_text() == "Hello world\n"
