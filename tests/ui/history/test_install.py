"""install_history puts the sidebar in a dock and reopens stored conversations through
the window: resumed (and repaired) history, calls and plans handed over in one object."""

from __future__ import annotations

from pathlib import Path

from PySide6.QtCore import Signal
from PySide6.QtWidgets import QDockWidget, QMainWindow
from pytestqt.qtbot import QtBot

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Message
from melgui.core.store import Store, open_store
from melgui.core.store.resume import Resumed
from melgui.ui.history import install_history
from melgui.ui.runtime.bridge import SessionBridge


class Host(QMainWindow):
    """A window offering what install_history uses (no session yet), recording what it is
    asked."""

    sessionChanged = Signal(object)
    session: AgentSession | None = None
    bridge: SessionBridge | None = None

    def __init__(self, folder: Path) -> None:
        super().__init__()
        self.folder = str(folder)
        self.opened: list[Resumed] = []
        self.new_requests = 0

    def project_folder(self) -> str:
        return self.folder

    def open_conversation(self, resumed: Resumed) -> None:
        self.opened.append(resumed)

    def new_conversation(self) -> None:
        self.new_requests += 1


def test_reopening_hands_the_window_a_repaired_conversation(
    qtbot: QtBot, store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    call = ToolCall("c1", "run_command", '{"command": "make"}')
    store.put_message(cid, 0, Message.user("build it"))
    store.put_message(cid, 1, Message.assistant("Building.", (call,)))
    store.call_requested(cid, call)
    store.call_state(cid, "c1", "running")  # the app died here
    store.add_plan(cid, "Build plan", "1. make")
    window = Host(tmp_path)
    qtbot.addWidget(window)
    sidebar = install_history(window, window, store)
    dock = window.findChild(QDockWidget, "historyDock")
    assert dock is not None and dock.widget() is sidebar
    qtbot.waitUntil(lambda: sidebar.ids() == [cid])  # listed on the listing thread

    sidebar.open(cid)  # its messages are read in a worker thread
    qtbot.waitUntil(lambda: bool(window.opened))
    (resumed,) = window.opened
    assert resumed.conversation_id == cid
    assert resumed.conversation.messages[-1].status == "interrupted"
    assert "interrupted" in (resumed.describe() or "")
    assert [(r.call_id, r.result_status) for r in resumed.tool_calls] == [("c1", "interrupted")]
    assert [p.title for p in resumed.plans] == ["Build plan"]
    assert sidebar.current_id == cid

    sidebar.new_button.click()
    assert window.new_requests == 1


def test_a_conversation_gone_meanwhile_is_a_message(
    qtbot: QtBot, store: Store, tmp_path: Path
) -> None:
    window = Host(tmp_path)
    qtbot.addWidget(window)
    sidebar = install_history(window, window, store)
    with qtbot.waitSignal(sidebar.problem):
        sidebar.open("no-such-id")
    assert window.opened == []
    assert "no longer stored" in window.statusBar().currentMessage()


def test_store_notice_reaches_the_status_bar(qtbot: QtBot, tmp_path: Path) -> None:
    data = tmp_path / "data"
    data.mkdir()
    (data / "history.sqlite3").write_bytes(b"not a database" * 50)
    with open_store(data) as store:
        window = Host(tmp_path)
        qtbot.addWidget(window)
        install_history(window, window, store)
        assert "damaged" in window.statusBar().currentMessage()


def test_a_later_click_wins_over_a_read_still_running(
    qtbot: QtBot, store: Store, tmp_path: Path
) -> None:
    first = store.create_conversation(str(tmp_path))
    store.put_message(first, 0, Message.user("first"))
    second = store.create_conversation(str(tmp_path))
    store.put_message(second, 0, Message.user("second"))
    window = Host(tmp_path)
    qtbot.addWidget(window)
    sidebar = install_history(window, window, store)
    sidebar.open(first)
    sidebar.open(second)  # before the first read came back
    qtbot.waitUntil(lambda: bool(window.opened))
    qtbot.wait(50)  # the first read's answer, if it was not dropped, would come by now
    assert [r.conversation_id for r in window.opened] == [second]
    assert sidebar.current_id == second
