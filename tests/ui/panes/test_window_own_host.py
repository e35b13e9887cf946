"""The real window with no user's host (`melgui --no-host`, as ui/app.py starts it) is a
view of a host of its own: `melgui host --stdio` as its child, a real process. Its turn
runs in the child (the model's stream is the child's connection, none of the window's);
its terminals' bytes come over the child's stdout; kill -9 of the child mid-turn is said
in plain words and a new child reopens the conversation from the window's journal, each
call with one result; closing the window ends and reaps the child. The user's host never
reopens the child's sessions, nor the child the user's host's."""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import QEvent, QObject
from PySide6.QtWidgets import QApplication, QLabel, QWidget

from melgui.host import change_journal
from melgui.host.remote_session import RemoteSession
from melgui.remote.remote_pty import RemotePty
from melgui.ui.app import attach_a_host, attach_when_painted
from melgui.ui.panes.terminal.pane import TerminalPane
from melgui.ui.window.host_view.view import HostView
from tests.fakes import ScriptedOpenAI, done, hold, text, tool_call, tool_calls
from tests.fakes.agent_loops import assert_valid
from tests.fakes.host_process import running_host
from tests.fakes.host_windows import alive, kill
from tests.fakes.long_session import openai_settings
from tests.fakes.window import Runner, Windows, type_prompt, wait_until


@pytest.fixture
def windows(run: Runner[Any], qloop: Any, project: Path) -> Any:
    made = Windows(project, run, qloop)
    yield made
    made.close()


def own_window(windows: Windows, server: ScriptedOpenAI) -> tuple[Any, HostView]:
    """A window as `melgui --no-host FOLDER` builds it: shown, then a view of a host of its
    own once that host answered."""
    window: Any = windows.make(openai_settings(server, model="gpt-test"))
    window.mcp.wait_for_host()
    windows.run(attach_a_host(window, user=False))
    view = window.host_view
    assert isinstance(view, HostView) and view.own
    return window, view


def shown(window: Any) -> str:
    return str(window.chat.transcript.toPlainText())


def said_on_status(window: Any) -> list[str]:
    messages: list[str] = []
    window.status.messageChanged.connect(lambda m: messages.append(m) if m else None)
    return messages


def socket_inodes(pid: int) -> set[str]:
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    return inodes


def streams_of(server: ScriptedOpenAI) -> set[str]:
    """The socket inodes of the client ends of the server's streams open now (its legs
    streaming): found in /proc/net by their ports."""
    with server._lock:
        ends = {c.getpeername()[1]: c.getsockname()[1] for c in server._streaming}
    found = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with open(table) as handle:
            for line in handle.readlines()[1:]:
                fields = line.split()
                local = int(fields[1].rsplit(":", 1)[1], 16)
                remote = int(fields[2].rsplit(":", 1)[1], 16)
                if ends.get(local) == remote:
                    found.add(fields[9])
    return found


def reaped(pid: int) -> bool:
    """Neither running nor a zombie left to reap."""
    return not os.path.exists(f"/proc/{pid}")


def test_a_no_host_window_runs_its_turn_in_a_host_of_its_own_which_ends_with_it(
    windows: Windows, scripted_openai: ScriptedOpenAI, run: Any, qtbot: Any
) -> None:
    gate = threading.Event()
    scripted_openai.script([text("Half of "), hold(gate), text("the answer."), done()])
    window, view = own_window(windows, scripted_openai)
    assert view.private is not None
    child, journal = view.private.pid, view.private.journal
    assert child is not None and alive(child) and child != os.getpid()
    assert view.client.info["pid"] == child
    assert window.guard.background is None  # nothing is offered to keep running
    assert isinstance(window.session, RemoteSession)

    async def streaming() -> None:
        type_prompt(qtbot, window, "say it")
        await wait_until(lambda: "Half of" in shown(window), timeout=30)

    run(streaming())
    streams = streams_of(scripted_openai)
    assert streams and streams <= socket_inodes(child)  # the model's stream is the child's
    assert not streams & socket_inodes(os.getpid())  # the window's process opened none
    gate.set()
    session = window.session
    run(wait_until(lambda: "the answer." in shown(window) and not session.busy, 30))
    assert [m.content for m in session.conversation.messages] == ["say it", "Half of the answer."]
    label = window.status.findChild(QLabel, "hostedLabel")
    assert label is not None and label.text() == "Runs in this window's melgui host"
    run(window.aclose())
    assert reaped(child)  # ended and reaped: no `melgui host` left behind
    assert not journal.exists()


def children_of(pid: int) -> set[int]:
    """The processes `pid` started that run now (its threads' children, from /proc)."""
    found: set[int] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        with open(f"/proc/{pid}/task/{task}/children") as handle:
            found |= {int(child) for child in handle.read().split()}
    return found


class FirstPaint(QObject):
    """At the first paint of anything in `window`: the children this process had then."""

    def __init__(self, window: QWidget) -> None:
        super().__init__()
        self.window = window
        self.children: set[int] | None = None

    def eventFilter(self, watched: QObject, event: QEvent) -> bool:
        if (
            self.children is None
            and event.type() == QEvent.Type.Paint
            and isinstance(watched, QWidget)
            and watched.window() is self.window
        ):
            self.children = children_of(os.getpid())
        return False


def test_a_no_host_window_starts_its_host_after_it_first_painted(
    windows: Windows, scripted_openai: ScriptedOpenAI, run: Any, qtbot: Any
) -> None:
    """`melgui --no-host`: the host's child starts once the window has painted (a start
    competes with the first paint), and a prompt typed before it answered still runs."""
    scripted_openai.script([text("Typed early, answered."), done()])
    window: Any = windows.make(openai_settings(scripted_openai, model="gpt-test"))
    window.mcp.wait_for_host()
    before = children_of(os.getpid())
    watch = FirstPaint(window)
    app = QApplication.instance()
    assert app is not None

    async def started() -> None:  # as ui/app.py starts it, a prompt typed meanwhile
        window.hide()
        window.setUpdatesEnabled(False)  # shown, not painted yet (as a slow screen's)
        window.show()
        app.installEventFilter(watch)
        attaching = asyncio.ensure_future(attach_when_painted(window))
        type_prompt(qtbot, window, "say it")
        for _ in range(100):  # ample turns of the loop for a child to start
            await asyncio.sleep(0)
        assert children_of(os.getpid()) == before and window.host_view is None
        window.setUpdatesEnabled(True)  # it paints
        await attaching

    try:
        run(started())
    finally:
        app.removeEventFilter(watch)
    view = window.host_view
    assert isinstance(view, HostView) and view.private is not None
    assert watch.children is not None and view.private.pid not in watch.children
    assert view.private.pid in children_of(os.getpid()) - before
    run(wait_until(lambda: "Typed early, answered." in shown(window), timeout=30))
    run(wait_until(lambda: not window.session.busy, timeout=30))
    assert [m.content for m in window.session.conversation.messages] == [
        "say it",
        "Typed early, answered.",
    ]


def test_a_terminal_pane_of_a_no_host_window_runs_in_its_host(
    windows: Windows,
    scripted_openai: ScriptedOpenAI,
    run: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SHELL", "/bin/sh")  # the host's child shell: quick, plain prompt
    window, view = own_window(windows, scripted_openai)
    assert view.private is not None and view.client.socket_path is None  # no passed pipes
    assert window.pane_manager.host is view.terminals

    async def echo() -> TerminalPane:
        await window.pane_manager.start_terminal(None)
        panes = [p for _, p in window.pane_manager.panes() if isinstance(p, TerminalPane)]
        pane = panes[0]
        assert isinstance(pane.pty, RemotePty)
        await wait_until(lambda: any(c in pane.emulator.text(1000) for c in "$#"), 30)
        pane.write(b"echo own-$((6*7))\r")
        await wait_until(lambda: "own-42" in pane.emulator.text(1000), timeout=30)
        return pane

    pane = run(echo())
    assert isinstance(pane.pty, RemotePty)
    assert pane.pty.host_pid not in window.pane_manager.all_pids()


def test_the_own_host_killed_mid_turn_is_said_and_a_new_one_reopens_the_conversation(
    windows: Windows, scripted_openai: ScriptedOpenAI, run: Any, qtbot: Any
) -> None:
    write = tool_call("write_file", {"path": "b.txt", "content": "x"}, id="w1")
    scripted_openai.script(
        [text("Writing."), tool_calls(write)],
        [text("After the restart."), done()],
    )
    window, view = own_window(windows, scripted_openai)
    assert view.private is not None
    first = view.private.pid
    assert first is not None
    session = window.session
    assert isinstance(session, RemoteSession)
    status = said_on_status(window)

    async def asking() -> None:
        type_prompt(qtbot, window, "write b")
        await wait_until(lambda: window.approvals.first() is not None, timeout=30)

    run(asking())
    session_id = session.session_id
    kill(first)
    run(wait_until(lambda: view.restarts == 1 and "window's own runs" in status[-1], 60))
    assert any("This window's melgui host stopped unexpectedly" in m for m in status)
    assert "the main conversation reopened from the journal" in status[-1]
    second = view.private.pid
    assert second is not None and second != first and alive(second) and reaped(first)
    assert window.session is session and session.session_id == session_id
    run(wait_until(lambda: any(m.tool_call_id == "w1" for m in session.conversation.messages)))
    results = [m for m in session.conversation.messages if m.tool_call_id == "w1"]
    assert len(results) == 1
    assert_valid(session.conversation)
    assert window.approvals.first() is None

    async def next_prompt() -> None:
        type_prompt(qtbot, window, "go on")
        await wait_until(lambda: "After the restart." in shown(window) and not session.busy, 30)

    run(next_prompt())
    assert scripted_openai.wait_for_legs(2)[1].messages[-1]["content"] == "go on"
    assert len([m for m in session.conversation.messages if m.tool_call_id == "w1"]) == 1
    journal = view.private.journal
    run(window.aclose())
    assert reaped(second) and not journal.exists()


def test_the_user_host_and_a_window_own_host_never_reopen_each_other_s_sessions(
    windows: Windows, scripted_openai: ScriptedOpenAI, run: Any, project: Path
) -> None:
    with running_host() as shared:
        # A session of the user's host, left open in its journal by its host's death.
        client = run(shared.client("view"))
        theirs = run(client.call("session/open", folder=str(project), model="gpt-test"))["id"]
        run(client.aclose())
        shared.kill()
        assert change_journal.ChangeJournal(change_journal.journal_path()).state(theirs) == 1
        window, view = own_window(windows, scripted_openai)
        assert view.private is not None
        mine = window.session
        assert isinstance(mine, RemoteSession)
        run(wait_until(lambda: mine.session_id != "", 30))
        listed = {s["id"] for s in run(view.client.call("session/list"))}
        assert theirs not in listed and mine.session_id in listed  # not taken from the user's
        # The user's host, started again while the window runs: its own session back,
        # none of the window's.
        shared.start()
        again = run(shared.client("view"))
        there = {s["id"] for s in run(again.call("session/list"))}
        run(again.aclose())
        assert theirs in there and mine.session_id not in there
        # A window's own host killed: its next one reopens the window's, not the user's.
        assert view.private.pid is not None
        kill(view.private.pid)
        run(wait_until(lambda: view.restarts == 1, 60))
        listed = {s["id"] for s in run(view.client.call("session/list"))}
        assert listed == {mine.session_id}


def test_a_window_whose_user_host_cannot_be_had_starts_one_of_its_own_and_says_so(
    windows: Windows,
    scripted_openai: ScriptedOpenAI,
    run: Any,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    runtime = tmp_path / "runtime"
    runtime.mkdir(mode=0o700)
    (runtime / "melgui").write_text("not the host's directory")  # refused: not a directory
    monkeypatch.setenv("XDG_RUNTIME_DIR", str(runtime))
    scripted_openai.script([text("From its own host."), done()])
    window: Any = windows.make(openai_settings(scripted_openai, model="gpt-test"))
    status = said_on_status(window)
    window.mcp.wait_for_host()
    run(attach_a_host(window, user=True))  # as `melgui FOLDER` does
    view = window.host_view
    assert isinstance(view, HostView) and view.own and view.private is not None
    assert "The melgui host could not be had" in status[-1] and "is not a directory" in status[-1]
    assert "run in a melgui host of its own, which ends when the window closes" in status[-1]
    assert window.guard.background is None
    session = window.session
    assert isinstance(session, RemoteSession)
    session.submit("hello")
    run(wait_until(lambda: "From its own host." in shown(window) and not session.busy, 30))
    child = view.private.pid
    assert child is not None
    run(window.aclose())
    assert reaped(child)
