"""ConversationHistory reopens stored conversations through what the window gives it:
resumed (and repaired) history, calls and plans handed over in one object; the window
puts its sidebar in a dock and its problems and the store's notice in the status bar."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from PySide6.QtWidgets import QDockWidget
from pytestqt.qtbot import QtBot

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Message
from melgui.core.store import Store
from melgui.core.store.resume import Resumed
from melgui.ui.history import ConversationHistory
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay
from tests.fakes.window import relay_settings


class Asked:
    """What the history asked of its window: conversations to show, new ones."""

    def __init__(self) -> None:
        self.opened: list[Resumed] = []
        self.new_requests = 0
        self.history: ConversationHistory | None = None  # kept alive as the window keeps it

    def new(self) -> None:
        self.new_requests += 1


def made(store: Store, folder: Path, asked: Asked) -> ConversationHistory:
    asked.history = ConversationHistory(store, lambda: str(folder), asked.opened.append, asked.new)
    return asked.history


def test_reopening_hands_the_window_a_repaired_conversation(
    qtbot: QtBot, store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    call = ToolCall("c1", "run_command", '{"command": "make"}')
    store.put_message(cid, 0, Message.user("build it"))
    store.put_message(cid, 1, Message.assistant("Building.", (call,)))
    store.calls.requested(cid, call)
    store.calls.phase(cid, "c1", "running")  # the app died here
    store.add_plan(cid, "Build plan", "1. make")
    asked = Asked()
    sidebar = made(store, tmp_path, asked).sidebar
    qtbot.addWidget(sidebar)
    qtbot.waitUntil(lambda: sidebar.ids() == [cid])  # listed on the listing thread

    sidebar.open(cid)  # its messages are read in a worker thread
    qtbot.waitUntil(lambda: bool(asked.opened))
    (resumed,) = asked.opened
    assert resumed.conversation_id == cid
    assert resumed.conversation.messages[-1].status == "interrupted"
    assert "interrupted" in (resumed.describe() or "")
    assert [(r.call_id, r.result_status) for r in resumed.tool_calls] == [("c1", "interrupted")]
    assert [p.title for p in resumed.plans] == ["Build plan"]
    assert sidebar.current_id == cid

    sidebar.new_button.click()
    assert asked.new_requests == 1


def test_a_conversation_gone_meanwhile_is_a_message(
    qtbot: QtBot, store: Store, tmp_path: Path
) -> None:
    asked = Asked()
    sidebar = made(store, tmp_path, asked).sidebar
    qtbot.addWidget(sidebar)
    with qtbot.waitSignal(sidebar.problem) as said:
        sidebar.open("no-such-id")
    assert asked.opened == []
    assert "no longer stored" in said.args[0]


def test_a_later_click_wins_over_a_read_still_running(
    qtbot: QtBot, store: Store, tmp_path: Path
) -> None:
    first = store.create_conversation(str(tmp_path))
    store.put_message(first, 0, Message.user("first"))
    second = store.create_conversation(str(tmp_path))
    store.put_message(second, 0, Message.user("second"))
    asked = Asked()
    sidebar = made(store, tmp_path, asked).sidebar
    qtbot.addWidget(sidebar)
    sidebar.open(first)
    sidebar.open(second)  # before the first read came back
    qtbot.waitUntil(lambda: bool(asked.opened))
    qtbot.wait(50)  # the first read's answer, if it was not dropped, would come by now
    assert [r.conversation_id for r in asked.opened] == [second]
    assert sidebar.current_id == second


def test_the_window_docks_the_sidebar_and_says_its_problems(
    make_window: Callable[..., MainWindow], scripted_relay: ScriptedRelay
) -> None:
    data = Path(os.environ["MELGUI_DATA_DIR"])
    data.mkdir(parents=True, exist_ok=True)
    (data / "history.sqlite3").write_bytes(b"not a database" * 50)
    window = make_window(relay_settings(scripted_relay))
    dock = window.findChild(QDockWidget, "historyDock")
    assert dock is not None and dock.widget() is window.history
    assert "damaged" in window.statusBar().currentMessage()
    window.history.problem.emit("History: the disk is full.")
    assert window.statusBar().currentMessage() == "History: the disk is full."
