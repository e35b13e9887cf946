"""The real window's MAIN conversation as a session of a real `melgui host` process
(`melgui --with-host`): its turn runs in the host, its approval is answered in the window,
"Keep running in the background" leaves its turn going, and the next window takes it back
as its main conversation (not as a pane), with what ran meanwhile in it once and the
question it asked meanwhile answered there. Retry, the role and plan mode go there.
(Its checkpoints, context meter, pins and /review: test_window_host_cards.py.)"""

from __future__ import annotations

import asyncio
import os
import threading
from pathlib import Path
from typing import Any

from PySide6.QtWidgets import QLabel

from melgui.host.remote_session import RemoteSession
from melgui.ui.checkpoints.review_bar import ReviewBar
from melgui.ui.panes.agent_pane import AgentPane
from tests.fakes import ScriptedRelay, done, hold, text, tool_call, tool_calls
from tests.fakes.host_process import HostProcess
from tests.fakes.host_windows import HostWindows
from tests.fakes.window import keep_running_asked, type_prompt, wait_until


def shown(window: Any) -> str:
    return str(window.chat.transcript.toPlainText())


def no_panes(window: Any) -> bool:
    return not [p for _, p in window.pane_manager.panes() if isinstance(p, AgentPane)]


def test_the_main_conversation_runs_in_the_host_and_asks_on_its_card(
    host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any, project: Path, qtbot: Any
) -> None:
    write = tool_call("write_file", {"path": "n.txt", "content": "ok"})
    scripted_relay.script([text("On it."), tool_calls(write)], [text("Notes written."), done()])
    window, view = host_windows.open()
    session = window.session
    assert isinstance(session, RemoteSession) and session.source == "main"
    label = window.findChild(QLabel, "hostedLabel")
    assert label is not None and "Keep running in the background" in label.toolTip()

    async def scenario() -> None:
        type_prompt(qtbot, window, "write notes")
        await wait_until(lambda: window.approvals.first() is not None, timeout=30)
        request = window.approvals.first()
        assert request is not None and request.call.name == "write_file"
        assert request.source == "main"
        assert window.approve_key()  # the waiting card's Approve, by its key
        await wait_until(lambda: not window.bridge.busy and "Notes written." in shown(window), 30)

    run(scenario())
    assert (project / "n.txt").read_text() == "ok"
    said = [m.content for m in session.conversation.messages if m.role == "assistant"]
    assert said == ["On it.", "Notes written."]
    listed = run(view.client.call("session/list"))
    assert [(s["id"], s["source"]) for s in listed] == [(session.session_id, "main")]
    assert window.status.context_meter is not None
    assert "Notes written." in shown(window) and no_panes(window)
    # The host recorded it in the history, which the sidebar lists and marks.
    run(wait_until(lambda: window.history.current_id == session.conversation_id != "", 10))
    if "MELGUI_SHOTS_DIR" in os.environ:
        window.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / "main-in-host.png"))
    assert view.client.gaps == []
    # A second window on the folder leaves this one's main conversation to it.
    second, _ = host_windows.open("second window")
    assert isinstance(second.session, RemoteSession) and no_panes(second)
    run(wait_until(lambda: second.session.session_id != "", timeout=30))
    assert second.session.session_id != session.session_id
    assert "Notes written." not in shown(second)


def test_keep_running_leaves_the_main_turn_to_the_host_and_the_next_window_takes_it_back(
    host: HostProcess,
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    qtbot: Any,
) -> None:
    gate = threading.Event()
    write = tool_call("write_file", {"path": "later.txt", "content": "late"})
    scripted_relay.script(
        [text("Started. "), hold(gate), text("Finished alone."), tool_calls(write)],
        [text("Written after all."), done()],
    )
    window, view = host_windows.open()
    session = window.session
    assert isinstance(session, RemoteSession)

    async def start() -> None:
        type_prompt(qtbot, window, "work long")
        await wait_until(lambda: "Started." in shown(window), timeout=30)

    run(start())
    session_id = session.session_id

    box, keep = keep_running_asked(window)  # asks: the main conversation is mid-turn
    assert "main conversation" in box.informativeText()
    keep.click()
    run(wait_until(lambda: not window.isVisible(), timeout=10))
    run(view.client.aclose())
    gate.set()  # the turn goes on with no window, and asks with no window

    async def asked_with_no_window() -> None:
        client = await host.client("watcher")
        try:
            while True:
                listed = {s["id"]: s for s in await client.call("session/list")}
                if listed[session_id]["approvals"]:
                    return
                await asyncio.sleep(0.05)
        finally:
            await client.aclose()

    run(asked_with_no_window())

    again, view = host_windows.open("window again")
    back = again.session
    assert isinstance(back, RemoteSession) and back.session_id == session_id
    assert no_panes(again)  # the main conversation, not a pane
    assert "main conversation is back" in again.status.currentMessage()
    assert not again.status.activity.isVisible()  # not "Ready" drawn under the message
    text_now = shown(again)
    assert text_now.count("Started. Finished alone.") == 1, text_now
    # The question it asked while no window was attached waits on its card here.
    run(wait_until(lambda: again.approvals.first() is not None, timeout=30))
    request = again.approvals.first()
    assert request is not None and request.call.name == "write_file"
    if "MELGUI_SHOTS_DIR" in os.environ:
        again.grab().save(str(Path(os.environ["MELGUI_SHOTS_DIR"]) / "main-reattached.png"))
    assert again.approve_key()
    run(wait_until(lambda: "Written after all." in shown(again) and not back.busy, timeout=30))
    assert (project / "later.txt").read_text() == "late"
    final = shown(again)
    assert final.count("Finished alone.") == 1 and final.count("Written after all.") == 1
    assert [m.content for m in back.conversation.messages if m.role == "user"] == ["work long"]
    assert view.client.gaps == []


def test_retry_and_the_role_go_to_the_host(
    host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any, qtbot: Any
) -> None:
    scripted_relay.script([text("First answer."), done()], [text("Second answer."), done()])
    window, _ = host_windows.open()
    session = window.session
    assert isinstance(session, RemoteSession)

    async def scenario() -> None:
        type_prompt(qtbot, window, "ask")
        await wait_until(lambda: "First answer." in shown(window) and not session.busy, 30)

    run(scenario())
    # Retry goes to the host: the conversation is cut there and the answer comes again.
    window.actions_by_name["retry"].trigger()
    run(wait_until(lambda: "Second answer." in shown(window) and not session.busy, timeout=30))
    said = [(m.role, m.content) for m in session.conversation.messages]
    assert said == [("user", "ask"), ("assistant", "Second answer.")]
    # The model and the role chosen in the window go to the host's session.
    window.set_role("orchestrator")

    async def role_there() -> bool:
        listed = await session.client.call("session/list")
        return bool(listed[0]["role"] == "orchestrator")

    async def wait_role() -> None:
        while not await role_there():
            await asyncio.sleep(0.05)

    run(wait_role())


def test_new_conversation_and_the_history_reopen_run_in_the_host_and_plan_mode_goes_there(
    host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any, qtbot: Any
) -> None:
    scripted_relay.script([text("About apples."), done()], [text("About pears."), done()])
    window, view = host_windows.open()
    first = window.session
    assert isinstance(first, RemoteSession)

    async def ask(prompt: str, answer: str) -> None:
        type_prompt(qtbot, window, prompt)
        await wait_until(lambda: answer in shown(window) and not window.session.busy, 30)

    run(ask("apples?", "About apples."))
    window.new_conversation()
    second = window.session
    assert isinstance(second, RemoteSession) and second is not first
    run(ask("pears?", "About pears."))
    assert "About apples." not in shown(window)
    first_id = first.conversation_id
    # Reopened from the history: the host continues it by its id, and the chat shows it.
    run(wait_until(lambda: first_id in window.history.ids(), timeout=10))
    window.history.conversationOpened.emit(first_id)
    run(wait_until(lambda: window.session is not second, timeout=10))
    reopened = window.session
    assert isinstance(reopened, RemoteSession)
    run(wait_until(lambda: reopened.conversation_id == first_id, timeout=30))
    run(wait_until(lambda: "About apples." in shown(window), timeout=30))
    assert "About pears." not in shown(window)
    # Plan mode, from the toolbar's button, goes to the host's session.
    window.toolbar.plan_button.setChecked(True)

    async def planning_there() -> None:
        while True:
            listed = {s["id"]: s for s in await view.client.call("session/list")}
            if listed[reopened.session_id]["plan"]:
                return
            await asyncio.sleep(0.05)

    run(planning_there())
    listed = run(view.client.call("session/list"))
    # The ones it replaced were closed in the host: one main session there.
    assert [(s["source"], s["conversation"]) for s in listed] == [("main", first_id)]


def test_an_empty_main_conversation_in_the_host_is_not_listed_in_the_history(
    host_windows: HostWindows,
    scripted_relay: ScriptedRelay,
    run: Any,
    project: Path,
    qtbot: Any,
) -> None:
    """The host stores its main conversation from its start; the sidebar lists it, as a
    window without the host does (it stores one at its first message), once something
    is said in it: no "New conversation" row for the empty one shown, and a row from the
    first message on, while its turn runs."""
    gate = threading.Event()
    scripted_relay.script([text("Hello "), hold(gate), text("there."), done()])
    window, _ = host_windows.open()
    session = window.session
    assert isinstance(session, RemoteSession)
    history = window.history
    run(wait_until(lambda: history.current_id == session.conversation_id != "", timeout=30))
    stored = history.store.conversations(str(project))
    assert [row.id for row in stored] == [session.conversation_id]  # kept there, empty
    history.refresh()
    run(wait_until(lambda: not history.listing, timeout=10))
    assert history.ids() == []

    async def say() -> None:
        type_prompt(qtbot, window, "hi")
        await wait_until(lambda: "Hello" in shown(window), 30)
        try:
            await wait_until(lambda: history.ids() == [session.conversation_id], 10)
        finally:
            gate.set()  # the turn ends
        await wait_until(lambda: "Hello there." in shown(window) and not session.busy, 30)

    run(say())
    run(wait_until(lambda: history.ids() == [session.conversation_id], timeout=10))


def test_attaching_keeps_the_chat_and_inspector_the_window_built_for_its_empty_conversation(
    host_windows: HostWindows, scripted_relay: ScriptedRelay, run: Any, qtbot: Any
) -> None:
    """The window opens with its chat, inspector and bridge built for its empty
    conversation; the host continues that conversation in them, not in a second set (the
    first would stay in memory), hooked once (one review bar), and its turn shows there."""
    scripted_relay.script([text("Hello from the host."), done()])
    window = host_windows.make()
    chat, inspector, bridge = window.chat, window.inspector, window.bridge
    host_windows.attach(window)
    session = window.session
    assert isinstance(session, RemoteSession)
    assert window.chat is chat and window.inspector is inspector and window.bridge is bridge
    assert window.bridge.session is session and window.inspector.book.model is session.thread
    assert len(window.chat.findChildren(ReviewBar)) == 1

    async def say() -> None:
        type_prompt(qtbot, window, "hi")
        await wait_until(lambda: "Hello from the host." in shown(window), 30)
        await wait_until(lambda: not window.bridge.busy and not session.busy, 30)

    run(say())
    said = [m.content for m in session.conversation.messages if m.role == "assistant"]
    assert said == ["Hello from the host."]
