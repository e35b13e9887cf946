"""Reopening a conversation in the real window reads it once, on the reader thread: the
GUI thread decodes none of its messages or calls again (not in resume, not in the
journal's mirror), and the conversation goes on from where it was stored."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from PySide6.QtCore import Qt
from pytestqt.qtbot import QtBot

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation, Message, Repair
from melgui.core.store import Store, ToolCallRecord
from melgui.core.store import store as store_module
from melgui.core.store.call_log import CallLog
from melgui.ui.chat.chat_view import ChatView
from melgui.ui.window.main_window import MainWindow
from tests.fakes import ScriptedRelay, done, text
from tests.fakes.window import relay_settings, wait_until


def send(qtbot: QtBot, window: MainWindow, prompt: str) -> None:
    window.chat.input.setFocus()
    qtbot.keyClicks(window.chat.input, prompt)
    qtbot.keyClick(window.chat.input, Qt.Key.Key_Return)


def stored_turns(store: Store, folder: str, turns: int) -> tuple[str, list[Message]]:
    cid = store.create_conversation(folder, title="kept")
    messages: list[Message] = []
    for turn in range(turns):
        call = ToolCall(f"c{turn}", "read_file", f'{{"path": "m{turn}.py"}}')
        messages += [
            Message.user(f"Question {turn}"),
            Message.assistant("Looking.", (call,)),
            Message.tool_result(call.id, f"x = {turn}"),
            Message.assistant(f"Answer {turn}"),
        ]
        store.calls.requested(cid, call)
        store.calls.decided(cid, call.id, "auto")
        store.calls.finished(cid, call.id, "ok", f"x = {turn}", 0.5)
    with store.transaction():
        for seq, message in enumerate(messages):
            store.put_message(cid, seq, message)
    return cid, messages


class ReadThreads:
    """The name of the thread of each read of a conversation's messages or calls, and of
    each check of its history for repairs."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.messages: list[str] = []
        self.calls: list[str] = []
        self.repairs: list[str] = []  # working out what a crash left open
        read_messages = store_module.read_messages
        tool_calls = CallLog.of
        repair_pairing = Conversation.repair_pairing

        def messages(conn: Any, cid: str) -> Any:
            self.messages.append(threading.current_thread().name)
            return read_messages(conn, cid)

        def calls(rows: CallLog, cid: str) -> list[ToolCallRecord]:
            self.calls.append(threading.current_thread().name)
            return tool_calls(rows, cid)

        def repair(conversation: Conversation) -> Repair:
            self.repairs.append(threading.current_thread().name)
            return repair_pairing(conversation)

        monkeypatch.setattr(store_module, "read_messages", messages)
        monkeypatch.setattr(CallLog, "of", calls)
        monkeypatch.setattr(Conversation, "repair_pairing", repair)


def test_reopening_reads_once_off_the_gui_thread_and_goes_on(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    project: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    scripted_relay.script([text("Going on."), done()])
    window: MainWindow = make_window(relay_settings(scripted_relay))
    sidebar = window.history
    cid, messages = stored_turns(sidebar.store, window.project_folder(), turns=30)
    reads = ReadThreads(monkeypatch)

    async def scenario() -> None:
        sidebar.open(cid)
        await wait_until(lambda: window.session.conversation.messages == messages)
        await wait_until(lambda: window.inspector.calls.count() == 30)
        book = window.inspector.book  # every call's record comes after the chat is shown
        await wait_until(lambda: all(r.duration == 0.5 for r in book.records.values()))
        assert reads.messages == ["melgui-history_0"]
        assert reads.calls == ["melgui-history_0"]
        assert reads.repairs == ["melgui-history_0"]
        send(qtbot, window, "Go on")
        await wait_until(lambda: not window.bridge.busy and window.session.loop.legs == 1)

    run(scenario())
    stored = [s.message for s in sidebar.store.messages(cid)]
    assert stored == [*messages, Message.user("Go on"), Message.assistant("Going on.")]
    sent = scripted_relay.legs_received[-1].messages
    assert len(sent) == len(messages) + 1  # the whole history went on the next leg
    record = window.inspector.book.records["c29"]
    assert (record.status, record.decision, record.duration) == ("ok", "auto", 0.5)


def test_the_reopened_chat_is_drawn_once_with_its_hooks(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    window: MainWindow = make_window(relay_settings(scripted_relay))
    sidebar = window.history
    cid, messages = stored_turns(sidebar.store, window.project_folder(), turns=60)
    sidebar.store.add_note(cid, "error", "the server went away")
    draws: list[tuple[int, bool, int]] = []
    load = ChatView.load_conversation

    def drawn(view: ChatView, conversation: Conversation, *args: Any, **kwargs: Any) -> None:
        draws.append((len(conversation.messages), view.card_extra is not None, len(view.failures)))
        load(view, conversation, *args, **kwargs)

    monkeypatch.setattr(ChatView, "load_conversation", drawn)

    async def scenario() -> None:
        sidebar.open(cid)
        await wait_until(lambda: window.session.conversation.messages == messages)

    run(scenario())
    # Once, the checkpoints' card extras hooked and the failure placed before it.
    assert draws == [(len(messages), True, 1)]
    assert "the server went away" in window.chat.transcript.toPlainText()


def test_the_reopened_chat_is_drawn_before_every_call_record_is_read(
    qtbot: QtBot,
    scripted_relay: ScriptedRelay,
    make_window: Any,
    run: Any,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first paint reads what its page needs: the calls' records (4,000 in a
    10,000-message conversation, the inspector's labels) are read after the chat is drawn,
    on the reader thread, and the inspector then shows them."""
    window: MainWindow = make_window(relay_settings(scripted_relay))
    sidebar = window.history
    cid, messages = stored_turns(sidebar.store, window.project_folder(), turns=30)
    reads = ReadThreads(monkeypatch)
    read_when_drawn: list[list[str]] = []
    load = ChatView.load_conversation

    def drawn(view: ChatView, conversation: Conversation, *args: Any, **kwargs: Any) -> None:
        read_when_drawn.append(list(reads.calls))
        load(view, conversation, *args, **kwargs)

    monkeypatch.setattr(ChatView, "load_conversation", drawn)

    async def scenario() -> None:
        sidebar.open(cid)
        await wait_until(lambda: window.session.conversation.messages == messages)
        book = window.inspector.book
        await wait_until(lambda: len(book.records) == 30)
        await wait_until(lambda: all(r.duration == 0.5 for r in book.records.values()))

    run(scenario())
    assert read_when_drawn == [[]]
    assert reads.calls == ["melgui-history_0"]
    record = window.inspector.book.records["c0"]
    assert (record.status, record.decision, record.duration) == ("ok", "auto", 0.5)
