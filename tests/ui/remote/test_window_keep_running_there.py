"""Quitting a remote folder's window while a worker whose loop runs in melgui's host there
(`loop_there`) is mid-turn: the question names it, with where it runs, and offers Keep
running in the background; kept, its turn goes on there with no window, and the next
window on the folder reopens it in a pane, which names the machine it runs on (over the
real sshd, a second local user)."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.window import keep_running_asked, wait_until
from tests.remote.fixtures import Remote
from tests.ui.remote.conftest import WindowThere

LIMIT = 120


def run(qloop: asyncio.AbstractEventLoop, work: Any, timeout: float = 180) -> Any:
    return qloop.run_until_complete(asyncio.wait_for(work, timeout))


def workers(window: Any) -> list[AgentPane]:
    return [p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane)]


def test_a_loop_there_worker_mid_turn_keeps_running_there_when_the_window_quits(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    remote_window: Any,
    window_there: WindowThere,
    qloop: asyncio.AbstractEventLoop,
) -> None:
    gate = threading.Event()
    count = tool_call("run_command", {"command": "echo x >> counter; echo counted"}, id="c1")
    scripted_relay.script(
        [text("Started. "), hold(gate, timeout=LIMIT), text("Finished alone. "), tool_calls(count)],
        [text("Counted once."), done()],
    )
    there = window_there("keep-worker-there", approval_modes={"run_command": "auto"})
    folder, address, window = there.folder, there.url, there.window

    async def start() -> RemoteSession:
        await wait_until(
            lambda: isinstance(window.session, RemoteSession) and window.session.session_id, LIMIT
        )
        # As the orchestrator's spawn_agent and New worker… start it: on the folder's host,
        # its loop there (RemoteSide's loop-there worker, not the window's host view's).
        await window.pane_manager.start_worker("count once", None, "right")
        (pane,) = workers(window)
        await wait_until(lambda: "Started." in pane.chat.transcript.toPlainText(), LIMIT)
        assert isinstance(pane.session, RemoteSession)
        return pane.session

    worker = run(qloop, start())
    assert not window.session.busy  # only the worker there is mid-turn
    box, keep = keep_running_asked(window)  # asks, offering to keep it
    said = box.informativeText()
    assert f"on {remote.server.alias}: the agent is in the middle of a turn" in said, said
    assert "on another machine can keep running there" in box.text()
    keep.click()
    run(qloop, wait_until(lambda: not window.isVisible(), 10))
    run(qloop, window.aclose())  # its link closes too: no view of the host there is left
    gate.set()  # the worker's turn goes on there, with no window on this machine
    run(qloop, wait_until(lambda: (folder / "counter").exists(), LIMIT))

    second = remote_window(address, there.settings)

    async def back() -> AgentPane:
        await wait_until(lambda: len(workers(second)) == 1, LIMIT)
        (pane,) = workers(second)
        await wait_until(lambda: "Counted once." in pane.chat.transcript.toPlainText(), LIMIT)
        return pane

    pane = run(qloop, back())
    # Its pane names the machine it runs on, as the one that started it did (list_panes'
    # `where`; the question before closing it names it so too).
    (info,) = [i for i, p in second.pane_manager.panes() if p is pane]
    assert info.where == remote.server.alias, info
    assert info.line().endswith(f"\t{remote.server.alias}")
    assert isinstance(pane.session, RemoteSession)
    assert pane.session.session_id == worker.session_id  # the same session there, reopened
    assert (folder / "counter").read_text() == "x\n"  # its command ran once
    chat = pane.chat.transcript.toPlainText()
    for line in ("Started.", "Finished alone.", "Counted once."):
        assert chat.count(line) == 1, (line, chat)
