"""A remote folder whose host's settings say `loop_there`, in the real window over the
real sshd (a second local user): its MAIN conversation is a session of melgui's host
there, opened over the folder's link with the window's key, not a loop in the window.

- its turn runs there: the host there lists it as the folder's main conversation, that
  host is the remote user's process, and its approval is answered in the window;
- the window closed mid-turn (Keep running in the background), with its link: the turn
  goes on there with no window (and asks there), and the next window on the folder takes
  it back as its main conversation, with what was said meanwhile in it once, the question
  answered in it, and the command run once;
- the ssh client killed mid-call: the link reconnects, the call's one result arrives
  once, and the conversation there goes on;
- a window whose model is a local one keeps the loop here and says why.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
from pathlib import Path
from typing import Any

from PySide6.QtCore import Qt
from PySide6.QtWidgets import QLabel

from melgui.core.config.settings import Settings
from melgui.host.remote_session import RemoteSession
from melgui.remote.connect import given_host_argv, open_link
from melgui.remote.target import parse_folder
from melgui.ui.window.host_view.main_conversation import HOSTED_NOTE
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.window import keep_running_asked, type_prompt, wait_until
from tests.remote.fixtures import Remote, tool_results, url
from tests.ui.remote.conftest import WindowThere, loop_there

LIMIT = 120


def run(qloop: asyncio.AbstractEventLoop, work: Any, timeout: float = 180) -> Any:
    return qloop.run_until_complete(asyncio.wait_for(work, timeout))


def shown(window: MainWindow) -> str:
    return str(window.chat.transcript.toPlainText())


async def main_there(window: MainWindow) -> RemoteSession:
    """The window's main conversation, once it is open in the host there."""
    await wait_until(
        lambda: isinstance(window.session, RemoteSession) and window.session.session_id, LIMIT
    )
    session = window.session
    assert isinstance(session, RemoteSession)
    return session


async def asked_there(address: str, session_id: str) -> list[dict[str, Any]]:
    """The questions session `session_id` asks in the host there, once it asks one (a
    test's look through a link of its own, attached to no session)."""
    link = await open_link(parse_folder(address), lambda _state: None, given_host_argv())
    try:
        client = await link.client()
        while True:
            listed = {s["id"]: s for s in await client.call("session/list")}
            if listed[session_id]["approvals"]:
                return list(listed[session_id]["approvals"])
            await asyncio.sleep(0.1)
    finally:
        await link.aclose()


def save_picture(window: MainWindow, folder: Path, name: str) -> None:
    """The window, drawn to `name` in MELGUI_SHOTS_DIR (else beside the folder), to look at."""
    window.grab().save(str(Path(os.environ.get("MELGUI_SHOTS_DIR") or folder.parent) / name))


def owner_of(pid: int) -> int:
    return Path(f"/proc/{pid}").stat().st_uid


def test_a_loop_there_folder_s_main_turn_runs_in_the_host_there(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    window_there: WindowThere,
    qloop: asyncio.AbstractEventLoop,
    qtbot: Any,
) -> None:
    write = tool_call("write_file", {"path": "n.txt", "content": "written there"}, id="w1")
    scripted_relay.script([text("Writing. "), tool_calls(write)], [text("Wrote it."), done()])
    there = window_there("main-there", {"a.txt": "here\n"})
    folder, window = there.folder, there.window

    async def scenario() -> tuple[RemoteSession, list[dict[str, Any]], int]:
        session = await main_there(window)
        assert session.source == "main"
        type_prompt(qtbot, window, "write n")
        await wait_until(lambda: window.approvals.first() is not None, LIMIT)
        request = window.approvals.first()
        assert request is not None and request.call.name == "write_file"
        assert request.source == "main"
        assert window.approve_key()  # the waiting card's Approve, by its key; sent there
        await wait_until(lambda: not window.bridge.busy and "Wrote it." in shown(window), LIMIT)
        view = window.host_view
        assert view is not None and view.there == remote.server.alias
        listed: list[dict[str, Any]] = await view.client.call("session/list")
        status = await view.client.call("host/status")
        return session, listed, int(status["pid"])

    session, listed, pid = run(qloop, scenario())
    mine = [s for s in listed if s["id"] == session.session_id]
    assert [(s["source"], s["folder"]) for s in mine] == [("main", str(folder))]
    assert owner_of(pid) == remote.server.user.pw_uid  # the loop's process is theirs
    assert (folder / "n.txt").read_text() == "written there"
    said = [m.content for m in session.conversation.messages if m.role == "assistant"]
    assert said == ["Writing. ", "Wrote it."]
    # Each leg carried the window's key, from the host there (sent once, in its memory).
    assert [r.authorization for r in scripted_relay.legs_received] == ["Bearer k"] * 2
    assert "kept in the memory of melgui's host there only" in shown(window)
    label = window.status.findChild(QLabel, "hostedLabel")
    assert label is not None and remote.server.alias in label.text()
    assert label.toolTip() == HOSTED_NOTE  # what the host does not carry, said as for ours
    save_picture(window, folder, "main-loop-there.png")


def test_the_sidebar_lists_the_conversations_there_and_one_opened_goes_on_there(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    window_there: WindowThere,
    qloop: asyncio.AbstractEventLoop,
    qtbot: Any,
) -> None:
    """The conversations the main conversation ran there are in the history of the host
    there, not this machine's: after New conversation the first is listed (asked over the
    link: `history/list`), and picked, it goes on in the host there with its messages."""
    scripted_relay.script([text("Apples are red."), done()], [text("Pears are green."), done()])
    there = window_there("main-there-history")
    folder, window = there.folder, there.window
    sidebar = window.history

    async def scenario() -> tuple[RemoteSession, RemoteSession, list[dict[str, Any]]]:
        first = await main_there(window)
        type_prompt(qtbot, window, "about apples")
        await wait_until(lambda: not window.bridge.busy and "Apples are red." in shown(window))
        cid = first.conversation_id
        sidebar.new_button.click()  # New conversation: the first is closed there
        assert sidebar.current_id is None  # the first, picked, opens again (even before
        # the new one's id is known)
        await wait_until(lambda: window.session is not first, LIMIT)
        new = await main_there(window)
        await wait_until(lambda: sidebar.current_id == new.conversation_id, LIMIT)
        await wait_until(lambda: cid in sidebar.ids() and not sidebar.listing, LIMIT)
        assert "Apples are red." not in shown(window)
        save_picture(window, folder, "main-loop-there-history.png")
        row = sidebar.list.visualRect(sidebar.model.index(sidebar.model.row_of(cid)))
        qtbot.mouseClick(sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=row.center())
        await wait_until(
            lambda: (
                isinstance(window.session, RemoteSession)
                and window.session.conversation_id == cid
                and "Apples are red." in shown(window)
            ),
            LIMIT,
        )
        reopened = window.session
        assert isinstance(reopened, RemoteSession)
        type_prompt(qtbot, window, "and pears?")
        await wait_until(lambda: not window.bridge.busy and "Pears are green." in shown(window))
        await wait_until(lambda: not sidebar.listing, LIMIT)  # read again after the turn
        view = window.host_view
        assert view is not None
        return first, reopened, await view.client.call("session/list")

    first, reopened, listed = run(qloop, scenario())
    cid = first.conversation_id
    assert reopened.session_id != first.session_id and reopened.source == "main"
    assert [s["conversation"] for s in listed if s["id"] == reopened.session_id] == [cid]
    assert first.session_id not in [s["id"] for s in listed]  # closed there by New
    # The model read the conversation so far with the new message, from the host there.
    sent = [m["content"] for m in scripted_relay.legs_received[1].messages]
    assert sent[-3:] == ["about apples", "Apples are red.", "and pears?"]
    said = [m.content for m in reopened.conversation.messages if m.role == "assistant"]
    assert said == ["Apples are red.", "Pears are green."]
    assert sidebar.lives_there(cid) and sidebar.store.summary(cid) is None  # not here
    assert sidebar.ids()[0] == cid and sidebar.current_id == cid  # the newest there
    # Only opened from here: rename, export and delete are the host there's.
    menu = [a.text() for a in sidebar.context_menu(cid).actions() if a.text()]
    assert menu == ["Open", "Import conversation…"]
    tip = sidebar.model.data(sidebar.model.index(0), Qt.ItemDataRole.ToolTipRole)
    assert f"melgui's host on {remote.server.alias}" in tip
    save_picture(window, folder, "main-loop-there-history-open.png")


def test_closed_mid_turn_the_turn_goes_on_there_and_the_next_window_takes_it_back(
    scripted_relay: ScriptedRelay,
    remote_window: Any,
    window_there: WindowThere,
    qloop: asyncio.AbstractEventLoop,
    qtbot: Any,
) -> None:
    gate = threading.Event()
    count = tool_call("run_command", {"command": "echo x >> counter; echo counted"}, id="c1")
    scripted_relay.script(
        [text("Started. "), hold(gate, timeout=LIMIT), text("Finished alone. "), tool_calls(count)],
        [text("Counted once."), done()],
    )
    there = window_there("main-there-back")
    folder, address, window = there.folder, there.url, there.window

    async def start() -> RemoteSession:
        session = await main_there(window)
        type_prompt(qtbot, window, "count once")
        await wait_until(lambda: "Started." in shown(window), LIMIT)
        return session

    session = run(qloop, start())
    box, keep = keep_running_asked(window)  # asks: the main conversation is mid-turn
    assert "main conversation" in box.informativeText()
    keep.click()
    run(qloop, wait_until(lambda: not window.isVisible(), 10))
    run(qloop, window.aclose())  # its link closes too: no view of the host there is left
    gate.set()  # the turn goes on there, with no window on this machine, and asks there
    waiting = run(qloop, asked_there(address, session.session_id))
    assert [q["name"] for q in waiting] == ["run_command"]
    assert not (folder / "counter").exists()

    second = remote_window(address, there.settings)

    async def back() -> RemoteSession:
        again = await main_there(second)
        assert "Finished alone." in shown(second)  # said there while no window was open
        await wait_until(lambda: second.approvals.first() is not None, LIMIT)
        request = second.approvals.first()
        assert request is not None and request.call.id == "c1"
        assert second.approve_key()  # the question asked meanwhile, answered here
        await wait_until(lambda: "Counted once." in shown(second) and not second.bridge.busy, LIMIT)
        return again

    again = run(qloop, back())
    assert again.session_id == session.session_id  # taken back, as its main conversation
    assert not [p for _, p in second.pane_manager.panes()]
    chat = shown(second)
    for line in ("Started.", "Finished alone.", "Counted once."):
        assert chat.count(line) == 1, (line, chat)
    said = [m.content for m in again.conversation.messages if m.role == "assistant"]
    assert said == ["Started. Finished alone. ", "Counted once."]
    assert tool_results(scripted_relay.legs_received[1]) == {"c1": 1}
    assert (folder / "counter").read_text() == "x\n"  # ran once
    assert "the main conversation is back" in second.status.currentMessage()
    save_picture(second, folder, "main-loop-there-back.png")


def test_a_killed_ssh_client_mid_call_leaves_the_conversation_there_whole(
    scripted_relay: ScriptedRelay,
    remote: Remote,
    window_there: WindowThere,
    qloop: asyncio.AbstractEventLoop,
    qtbot: Any,
) -> None:
    slow = "echo s >> started; while [ ! -e go ]; do sleep 0.05; done; echo x >> counter; echo ran"
    scripted_relay.script(
        [tool_calls(tool_call("run_command", {"command": slow}, id="c1"))],
        [text("It ran."), done()],
    )
    there = window_there("main-there-drop")
    folder, window = there.folder, there.window
    states: list[str] = []
    indicator = window.remote.indicator

    def heard(name: str, state: str) -> None:
        states.append(state)
        indicator.show_state(name, state)

    window.remote.hosts.on_state = heard

    async def scenario() -> RemoteSession:
        session = await main_there(window)
        type_prompt(qtbot, window, "run it")
        await wait_until(lambda: window.approvals.first() is not None, LIMIT)
        assert window.approve_key()  # the host there asks, by its own rules
        await wait_until(lambda: (folder / "started").exists(), LIMIT)
        place = await window.remote.place(remote.server.alias)
        pid = place.link.pid
        assert pid is not None
        os.kill(pid, signal.SIGKILL)  # the ssh client dies mid-call; the loop is there
        (folder / "go").write_text("")
        await wait_until(lambda: "It ran." in shown(window) and not window.bridge.busy, LIMIT)
        await wait_until(lambda: place.link.reconnects >= 1 and "connected" in indicator.text())
        return session

    session = run(qloop, scenario())
    assert any(state.startswith("reconnecting") for state in states)
    assert (folder / "counter").read_text() == "x\n"  # ran once
    assert tool_results(scripted_relay.legs_received[1]) == {"c1": 1}  # one result
    assert shown(window).count("It ran.") == 1
    said = [m.content for m in session.conversation.messages if m.role == "assistant"]
    assert said[-1] == "It ran."


def test_a_local_model_keeps_the_loop_here_and_says_why(
    remote: Remote, remote_window: Any, qloop: asyncio.AbstractEventLoop
) -> None:
    folder = remote.folder("main-there-local", {})
    settings = Settings(connection="local", hosts=loop_there(remote, folder))
    window = remote_window(url(remote, folder), settings)
    note = window.chat.note_label
    run(qloop, wait_until(lambda: "needs a model server" in note.text(), LIMIT))
    assert "local one, on this machine" in note.text()
    assert not isinstance(window.session, RemoteSession) and window.host_view is None
