"""kill -9 of a real `melgui host` process under the real window (`melgui --with-host`),
mid-turn: the window says so in plain words, starts a new host process (the real
`HostClient.attach_or_start`, in the test's own runtime directory), and the main
conversation and a worker pane go on there, reopened from the journal: every call that
was open has exactly one result, what streamed after the last saved message is lost, and
the next prompt works. A second kill goes the same way; with no new host, the main
conversation goes on in a host the window starts as its own child, from the history."""

from __future__ import annotations

import os
import sys
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtWidgets import QLabel

from melgui.core.agent.session import AgentSession
from melgui.host import change_journal
from melgui.host.client import HostClient
from melgui.host.remote_session import RemoteSession
from melgui.ui.panes.agent_pane import AgentPane
from melgui.ui.window.host_view.view import HostView
from tests.fakes import ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.agent_loops import assert_valid
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import Hosts, HostWindows, alive, kill
from tests.fakes.window import type_prompt, wait_until


@pytest.fixture
def host(hosts: Hosts) -> HostProcess:
    """The windows' host: the first of `hosts`."""
    return hosts.first


def agent_panes(window: Any) -> list[AgentPane]:
    return [p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane)]


def shown(chat: Any) -> str:
    return str(chat.transcript.toPlainText())


def said_on_status(window: Any) -> list[str]:
    messages: list[str] = []
    window.status.messageChanged.connect(lambda m: messages.append(m) if m else None)
    return messages


def results_of(session: RemoteSession, call_id: str) -> list[Any]:
    return [m for m in session.conversation.messages if m.tool_call_id == call_id]


async def listed(view: HostView) -> dict[str, Any]:
    return {s["id"]: s for s in await view.client.call("session/list")}


def test_a_host_killed_mid_stream_is_said_and_a_new_host_reopens_the_conversation(
    hosts: Hosts, host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any, qtbot: Any
) -> None:
    gate = threading.Event()
    scripted_relay.script(
        [text("Half of a "), hold(gate), text("never sent"), done()],
        [text("After the restart."), done()],
    )
    window, view = host_windows.open()
    session = window.session
    assert isinstance(session, RemoteSession)
    status = said_on_status(window)

    async def streaming() -> None:
        type_prompt(qtbot, window, "say it")
        await wait_until(lambda: "Half of a" in shown(window.chat), timeout=30)

    run(streaming())
    session_id = session.session_id
    hosts.first.kill()
    gate.set()
    run(wait_until(lambda: view.restarts == 1 and "new melgui host runs" in status[-1], 60))
    assert any("melgui host stopped unexpectedly" in m and "programs" in m for m in status)
    assert "the main conversation reopened from the journal" in status[-1]
    pid = hosts.note(view.client)
    assert pid != hosts.first_pid and alive(pid)
    # The same conversation, same session, in the new host, valid, the cut text lost.
    assert window.session is session and session.session_id == session_id
    assert set(run(listed(view))) == {session_id}
    run(wait_until(lambda: "programs the turn ran ended" in shown(window.chat), timeout=30))
    assert_valid(session.conversation)
    assert [m.content for m in session.conversation.messages] == ["say it"]
    assert "never sent" not in shown(window.chat)
    assert not window.bridge.busy
    if "MELGUI_SHOTS_DIR" in os.environ:
        window.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / "host-killed.png"))

    async def next_prompt() -> None:
        type_prompt(qtbot, window, "go on")
        await wait_until(
            lambda: "After the restart." in shown(window.chat) and not session.busy, timeout=30
        )

    run(next_prompt())
    legs = scripted_relay.wait_for_legs(2)
    assert legs[1].last_user_text == "go on"
    assert_valid(session.conversation)
    assert view.client.gaps == []


def test_a_host_killed_while_an_approval_waits_and_a_worker_streams_and_a_second_kill(
    hosts: Hosts,
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    qtbot: Any,
) -> None:
    gate = threading.Event()
    write = tool_call("write_file", {"path": "b.txt", "content": "x"}, id="w1")
    scripted_relay.script(
        [text("Worker half "), hold(gate), text("never seen"), done()],
        [text("Writing."), tool_calls(write)],
        [text("Second host answers."), done()],
        [text("Worker goes on."), done()],
        [text("Third host answers."), done()],
    )
    window, view = host_windows.open()
    main = window.session
    assert isinstance(main, RemoteSession)
    status = said_on_status(window)

    async def worker_streams_and_main_asks() -> AgentPane:
        window.pane_manager.spawn_agent("a long task", None, "right")
        panes = [p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane)]
        assert len(panes) == 1
        pane = panes[0]
        await wait_until(lambda: "Worker half" in shown(pane.chat), timeout=30)
        type_prompt(qtbot, window, "write b")
        await wait_until(lambda: window.approvals.first() is not None, timeout=30)
        return pane

    pane = run(worker_streams_and_main_asks())
    worker = pane.session
    assert isinstance(worker, RemoteSession) and worker.busy
    hosts.first.kill()
    gate.set()
    run(wait_until(lambda: view.restarts == 1 and "new melgui host runs" in status[-1], 60))
    assert "the main conversation and 1 worker reopened" in status[-1]
    assert window.approvals.first() is None  # the question went with the host
    # The open call has its one result, in the window's copy and in the new host.
    run(wait_until(lambda: len(results_of(main, "w1")) == 1, timeout=30))
    assert_valid(main.conversation)
    assert results_of(main, "w1")[0].status == "interrupted"
    assert not (project / "b.txt").exists()
    there = run(listed(view))
    assert set(there) == {main.session_id, worker.session_id}
    assert not there[main.session_id]["busy"] and there[main.session_id]["approvals"] == []
    # Its card says how it ended, no longer that it waits.
    run(wait_until(lambda: "programs the turn ran ended" in shown(window.chat), timeout=30))
    assert "waiting for approval" not in shown(window.chat)
    assert "interrupted" in shown(window.chat)
    # The worker pane says its turn and programs ended with the host; what it streamed
    # after its last saved message is gone, and it goes on in the new host.
    assert "programs the turn ran ended" in shown(pane.chat)
    assert "Worker half" not in shown(pane.chat) and not worker.busy
    assert "ended with the melgui host" in pane.state.detail
    assert_valid(worker.conversation)
    assert [m.content for m in worker.conversation.messages] == ["a long task"]
    if "MELGUI_SHOTS_DIR" in os.environ:
        window.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / "host-killed-asking.png"))

    async def ask(prompt: str, answer: str) -> None:
        type_prompt(qtbot, window, prompt)
        await wait_until(lambda: answer in shown(window.chat) and not main.busy, timeout=30)

    run(ask("go on", "Second host answers."))
    assert scripted_relay.wait_for_legs(3)[2].last_user_text == "go on"
    assert_valid(main.conversation)

    async def worker_again() -> None:
        pane.send("go on, worker")
        await wait_until(lambda: "Worker goes on." in shown(pane.chat) and not worker.busy, 30)

    run(worker_again())
    assert scripted_relay.wait_for_legs(4)[3].last_user_text == "go on, worker"
    second = hosts.note(view.client)

    kill(second)  # idle this time: the same again
    run(wait_until(lambda: view.restarts == 2 and "new melgui host runs" in status[-1], 60))
    third = hosts.note(view.client)
    assert third not in (second, hosts.first_pid) and alive(third)
    assert set(run(listed(view))) == {main.session_id, worker.session_id}
    assert "Worker goes on." in shown(pane.chat)
    run(ask("and again", "Third host answers."))
    assert scripted_relay.wait_for_legs(5)[4].last_user_text == "and again"
    assert_valid(main.conversation)
    assert len(results_of(main, "w1")) == 1
    assert view.client.gaps == []


def test_with_no_new_host_the_main_conversation_goes_on_in_a_host_of_the_window_s_own(
    hosts: Hosts, host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any, qtbot: Any
) -> None:
    write = tool_call("write_file", {"path": "c.txt", "content": "x"}, id="c1")
    scripted_relay.script(
        [text("Worker done."), done()],
        [text("Writing."), tool_calls(write)],
        [text("Answered in its own host."), done()],
        [text("A worker of its own host."), done()],
    )

    async def no_host() -> HostClient:
        raise OSError("the melgui host did not start; see host.log")

    window = host_windows.make()
    view = host_windows.attach(window, start=no_host)
    hosted = window.session
    assert isinstance(hosted, RemoteSession)
    status = said_on_status(window)

    async def worker_then_question() -> AgentPane:
        window.pane_manager.spawn_agent("a small task", None, "right")
        pane = agent_panes(window)[0]
        await wait_until(lambda: "Worker done." in shown(pane.chat) and not pane.session.busy, 30)
        type_prompt(qtbot, window, "write c")
        await wait_until(lambda: window.approvals.first() is not None, timeout=30)
        await wait_until(lambda: hosted.conversation_id != "", timeout=30)
        return pane

    pane = run(worker_then_question())
    cid = hosted.conversation_id
    hosts.first.kill()
    run(wait_until(lambda: bool(status) and "a melgui host of its own" in status[-1], 60))
    assert "no new one could start (the melgui host did not start; see host.log)" in status[-1]
    assert "it ends when the window closes" in status[-1]
    # Not in the window: in a host the window started as its child, which ends with it.
    assert window.host_view is view and view.own and view.private is not None
    own = view.private.pid
    assert own is not None and alive(own) and own != hosts.first_pid
    assert window.guard.background is None  # nothing of it is offered to keep running
    main = window.session
    assert isinstance(main, RemoteSession) and main is not hosted
    run(wait_until(lambda: any(m.tool_call_id == "c1" for m in main.conversation.messages), 30))
    assert_valid(main.conversation)
    results = [m for m in main.conversation.messages if m.tool_call_id == "c1"]
    assert len(results) == 1 and results[0].status == "interrupted"
    assert "goes on in a melgui host this window started for itself" in shown(window.chat)
    assert window.history.current_id == cid
    label = window.status.findChild(QLabel, "hostedLabel")
    assert label is not None and label.text() == "Runs in this window's melgui host"
    # The worker pane says it ended with the host; a message to it fails in words.
    assert "this worker ended with the host" in shown(pane.chat)
    assert pane.state.name == "failed"
    if "MELGUI_SHOTS_DIR" in os.environ:
        window.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / "host-killed-no-host.png"))
    pane.send("are you there?")
    run(wait_until(lambda: "did not reach the host" in pane.last_error, timeout=30))
    run(wait_until(lambda: not pane.bridge.busy, timeout=30))

    async def next_prompt() -> None:
        type_prompt(qtbot, window, "go on here")
        await wait_until(
            lambda: "Answered in its own host." in shown(window.chat) and not main.busy, 30
        )

    run(next_prompt())
    assert scripted_relay.wait_for_legs(3)[2].last_user_text == "go on here"
    assert_valid(main.conversation)

    async def new_worker_there() -> None:  # new workers run in the window's own host too
        window.pane_manager.spawn_agent("another task", None, "right")
        pane = agent_panes(window)[-1]
        assert isinstance(pane.session, RemoteSession)
        await wait_until(lambda: "A worker of its own host." in shown(pane.chat), timeout=30)

    run(new_worker_there())
    assert scripted_relay.wait_for_legs(4)[3].last_user_text == "another task"

    # The dead host's journal says the window took the main conversation over: a host
    # started later (a later `melgui --with-host`) does not reopen it beside this window.
    def state() -> int | None:
        journal = change_journal.ChangeJournal(change_journal.journal_path())
        try:
            return journal.state(hosted.session_id)
        finally:
            journal.close()

    run(wait_until(lambda: state() == change_journal.TAKEN, timeout=30))
    hosts.first.start()
    later = run(hosts.first.client("a later window"))
    try:
        ids = [s["id"] for s in run(later.call("session/list"))]
        assert hosted.session_id not in ids
        assert pane.session.session_id in ids  # a worker that ended with the host is not taken
    finally:
        run(later.aclose())


def test_with_no_host_at_all_the_main_conversation_goes_on_in_the_window(
    hosts: Hosts,
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    qtbot: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    write = tool_call("write_file", {"path": "d.txt", "content": "x"}, id="d1")
    scripted_relay.script(
        [text("Writing."), tool_calls(write)],
        [text("Answered in the window."), done()],
    )

    async def no_host() -> HostClient:
        raise OSError("the melgui host did not start; see host.log")

    window = host_windows.make()
    view = host_windows.attach(window, start=no_host)
    hosted = window.session
    assert isinstance(hosted, RemoteSession)
    status = said_on_status(window)

    async def question() -> None:
        type_prompt(qtbot, window, "write d")
        await wait_until(lambda: window.approvals.first() is not None, timeout=30)
        await wait_until(lambda: hosted.conversation_id != "", timeout=30)

    run(question())
    cid = hosted.conversation_id
    # No host of the window's own can start either: its program is not there.
    monkeypatch.setattr(sys, "executable", str(Path(sys.executable).parent / "no-such-python"))
    hosts.first.kill()
    run(wait_until(lambda: bool(status) and "No melgui host could start" in status[-1], 60))
    assert "goes on in this window" in status[-1]
    assert "nor one of this window's own" in shown(window.chat)
    assert window.host_view is None and window.guard.background is None
    local = window.session
    assert isinstance(local, AgentSession)  # in the window, from the history
    results = [m for m in local.conversation.messages if m.tool_call_id == "d1"]
    assert len(results) == 1 and results[0].status == "interrupted"
    assert window.history.current_id == cid
    monkeypatch.undo()

    async def next_prompt() -> None:
        type_prompt(qtbot, window, "go on here")
        await wait_until(
            lambda: "Answered in the window." in shown(window.chat) and not window.bridge.busy, 30
        )

    run(next_prompt())
    assert_valid(local.conversation)
    assert view.restarts == 0
