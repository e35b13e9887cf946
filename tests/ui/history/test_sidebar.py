"""The history sidebar on a real store: order, search, rename, delete with undo, open,
export and import, and storage trouble shown instead of raised."""

from __future__ import annotations

import json
import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Message
from melgui.core.store import ConversationSummary, Store, open_store
from melgui.ui.history import HistorySidebar, reader
from melgui.ui.history.model import ID_ROLE, UPDATED_ROLE
from tests.fakes.clocks import FakeClock, step_clock


@pytest.fixture
def store_clock() -> FakeClock:
    return step_clock()


@pytest.fixture
def folder(tmp_path: Path) -> Path:
    path = tmp_path / "project"
    path.mkdir()
    return path


def add(store: Store, folder: Path, *texts: str) -> str:
    cid = store.create_conversation(str(folder))
    for seq, text in enumerate(texts):
        store.put_message(cid, seq, Message.user(text) if seq % 2 == 0 else Message.assistant(text))
    return cid


def make(qtbot: QtBot, store: Store, folder: Path) -> HistorySidebar:
    sidebar = HistorySidebar(store, str(folder))
    qtbot.addWidget(sidebar)
    sidebar.show()
    return settled(qtbot, sidebar)


def settled(qtbot: QtBot, sidebar: HistorySidebar) -> HistorySidebar:
    """The list shown is the store's (it is queried on the listing thread)."""
    qtbot.waitUntil(lambda: not sidebar.listing)
    return sidebar


def titles(sidebar: HistorySidebar) -> list[str]:
    model = sidebar.model
    return [model.index(row).data() for row in range(model.rowCount())]


def test_lists_this_folders_conversations_newest_first(
    qtbot: QtBot, store: Store, folder: Path, tmp_path: Path
) -> None:
    other = tmp_path / "other"
    other.mkdir()
    add(store, folder, "first question")
    add(store, other, "elsewhere")
    add(store, folder)  # nothing said in it (a host's new main conversation): not listed
    add(store, folder, "latest question", "answer")
    sidebar = make(qtbot, store, folder)
    assert titles(sidebar) == ["latest question", "first question"]
    assert not sidebar.empty.isVisible()
    sidebar.set_folder(str(other))
    assert titles(settled(qtbot, sidebar)) == ["elsewhere"]


def test_empty_folder_says_so(qtbot: QtBot, store: Store, folder: Path) -> None:
    sidebar = make(qtbot, store, folder)
    assert sidebar.empty.isVisible() and "No conversations" in sidebar.empty.text()


def test_search_filters_after_typing(qtbot: QtBot, store: Store, folder: Path) -> None:
    add(store, folder, "about the parser", "tokens and grammar")
    add(store, folder, "about the window", "qt layouts")
    sidebar = make(qtbot, store, folder)
    qtbot.keyClicks(sidebar.search, "grammar")
    qtbot.waitUntil(lambda: titles(sidebar) == ["about the parser"])
    sidebar.search.setText("zebra")
    qtbot.waitUntil(lambda: titles(sidebar) == [])
    assert "Nothing matches" in sidebar.empty.text()
    sidebar.search.clear()
    qtbot.waitUntil(lambda: len(titles(sidebar)) == 2)


def test_rename_through_the_list_editor(qtbot: QtBot, store: Store, folder: Path) -> None:
    cid = add(store, folder, "old title")
    sidebar = make(qtbot, store, folder)
    sidebar.model.setData(sidebar.model.index(0), "Parser work", Qt.ItemDataRole.EditRole)
    assert titles(settled(qtbot, sidebar)) == ["Parser work"]
    assert (s := store.summary(cid)) is not None and s.title == "Parser work"


def test_delete_then_undo(qtbot: QtBot, store: Store, folder: Path) -> None:
    keep = add(store, folder, "keep")
    gone = add(store, folder, "remove me")
    sidebar = make(qtbot, store, folder)
    sidebar.delete(gone)
    assert settled(qtbot, sidebar).ids() == [keep]
    assert sidebar.undo_bar.isVisible() and "remove me" in sidebar.undo_bar.label.text()
    qtbot.mouseClick(sidebar.undo_bar.button, Qt.MouseButton.LeftButton)
    assert settled(qtbot, sidebar).ids() == [gone, keep]
    assert not sidebar.undo_bar.isVisible()


def test_delete_key_and_undo_shortcut(qtbot: QtBot, store: Store, folder: Path) -> None:
    cid = add(store, folder, "only one")
    sidebar = make(qtbot, store, folder)
    sidebar.list.setFocus()
    sidebar.list.setCurrentIndex(sidebar.model.index(0))
    qtbot.keyClick(sidebar.list, Qt.Key.Key_Delete)
    assert settled(qtbot, sidebar).ids() == []
    qtbot.keyClick(sidebar.list, Qt.Key.Key_Z, Qt.KeyboardModifier.ControlModifier)
    assert settled(qtbot, sidebar).ids() == [cid]


def test_deleting_the_open_conversation_asks_for_a_new_one(
    qtbot: QtBot, store: Store, folder: Path
) -> None:
    cid = add(store, folder, "open one")
    sidebar = make(qtbot, store, folder)
    sidebar.set_current(cid)
    with qtbot.waitSignal(sidebar.newConversationRequested):
        sidebar.delete(cid)
    assert sidebar.current_id is None


def test_clicking_a_row_opens_it(qtbot: QtBot, store: Store, folder: Path) -> None:
    add(store, folder, "older")
    newest = add(store, folder, "newer")
    sidebar = make(qtbot, store, folder)
    rect = sidebar.list.visualRect(sidebar.model.index(0))
    with qtbot.waitSignal(sidebar.conversationOpened) as opened:
        qtbot.mouseClick(sidebar.list.viewport(), Qt.MouseButton.LeftButton, pos=rect.center())
    assert opened.args == [newest]
    assert sidebar.list.currentIndex().data(ID_ROLE) == newest


def test_export_and_import(qtbot: QtBot, store: Store, folder: Path, tmp_path: Path) -> None:
    cid = add(store, folder, "export me", "with an answer")
    store.put_message(cid, 2, Message.assistant("", (ToolCall("c1", "read_file", "{}"),)))
    store.put_message(cid, 3, Message.tool_result("c1", "file text"))
    sidebar = make(qtbot, store, folder)
    markdown, data = tmp_path / "out.md", tmp_path / "out.json"
    assert sidebar.export_to(cid, markdown, "markdown")
    assert sidebar.export_to(cid, data, "json")
    assert markdown.read_text().startswith("# export me")
    assert "<details>" in markdown.read_text()
    assert json.loads(data.read_text())["id"] == cid
    new_id = sidebar.import_from(data)
    assert new_id is not None and new_id != cid
    # The copy keeps the original's last change; the later row comes first on a tie.
    assert settled(qtbot, sidebar).ids() == [new_id, cid]


def test_problems_are_signals_not_exceptions(
    qtbot: QtBot, store: Store, folder: Path, tmp_path: Path
) -> None:
    cid = add(store, folder, "x")
    sidebar = make(qtbot, store, folder)
    bad = tmp_path / "bad.json"
    bad.write_text("{nope")
    with qtbot.waitSignal(sidebar.problem) as problem:
        assert sidebar.import_from(bad) is None
    assert problem.args[0].startswith("Cannot import: not JSON")
    with qtbot.waitSignal(sidebar.problem):
        assert not sidebar.export_to(cid, tmp_path / "missing" / "dir" / "x.md", "markdown")
    store.close()
    assert store.path is not None
    store.path.unlink()  # the listing thread cannot open it any more
    with qtbot.waitSignal(sidebar.problem) as problem:
        sidebar.refresh()
    assert problem.args[0].startswith("History:")


def test_store_notice_is_shown(qtbot: QtBot, tmp_path: Path, folder: Path) -> None:
    data = tmp_path / "broken"
    data.mkdir()
    (data / "history.sqlite3").write_bytes(b"garbage" * 100)
    with open_store(data) as store:
        sidebar = make(qtbot, store, folder)
        assert sidebar.notice.isVisible() and "damaged" in sidebar.notice.text()


def test_rows_paint_with_their_time(qtbot: QtBot, store: Store, folder: Path) -> None:
    add(store, folder, "a title long enough to be elided in a narrow sidebar " * 3)
    sidebar = make(qtbot, store, folder)
    sidebar.resize(200, 200)
    assert not sidebar.grab().isNull()  # runs the row delegate's paint
    assert sidebar.model.index(0).data(UPDATED_ROLE)  # HH:MM today


def test_the_list_is_queried_off_the_gui_thread(
    qtbot: QtBot, store: Store, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real = reader.conversations_from_file

    def spied(path: Path, where: str, query: str, keep: str | None) -> list[ConversationSummary]:
        threads.append(threading.current_thread().name)
        return real(path, where, query, keep)

    monkeypatch.setattr(reader, "conversations_from_file", spied)
    add(store, folder, "about the parser")
    sidebar = make(qtbot, store, folder)
    sidebar.search.setText("parser")
    sidebar.refresh()
    sidebar.search.setText("nothing like it")
    with qtbot.waitSignal(sidebar.listed):
        sidebar.refresh()  # the later answer is the one shown
    assert titles(sidebar) == [] and "Nothing matches" in sidebar.empty.text()
    assert threads and all(name.startswith("melgui-listing") for name in threads)


def test_the_list_is_read_after_the_writes_handed_over_before(
    qtbot: QtBot, store: Store, folder: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A conversation is listed once it has a message, and the window's first message is
    written by the store's writer thread: a refresh asked after it was handed over lists
    the conversation, however late that thread writes it."""
    sidebar = make(qtbot, store, folder)
    gate = threading.Event()  # the writer thread is held until the listing waits for it
    real = getattr(reader, "written", None)

    def waiting(write: Any) -> None:
        if write is not None and real is not None:
            gate.set()
            real(write)

    monkeypatch.setattr(reader, "written", waiting, raising=False)
    sidebar.listed.connect(gate.set)  # (a list read without waiting lets it go too)
    cid = store.create_conversation(str(folder))
    store.write_behind(gate.wait, 30)
    store.write_behind(store.put_message, cid, 0, Message.user("first words"))
    with qtbot.waitSignal(sidebar.listed):
        sidebar.refresh()
    assert sidebar.ids() == [cid] and titles(sidebar) == ["first words"]
