"""The inspector's book of calls: built from the session's thread, kept current from its
changes (the loop's events go through the session's reducer, as in a real turn)."""

from __future__ import annotations

import asyncio

from pytestqt.qtbot import QtBot

from melgui.core.protocol.approval import ApprovalRequest
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import (
    ApprovalNeeded,
    LegStarted,
    MessageAdded,
    ToolCallFinished,
    ToolCallRequested,
    ToolCallStarted,
)
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.store.records import ToolCallRecord
from melgui.ui.inspector.call_book import CallBook
from melgui.ui.runtime.qt_loop import QtEventLoop
from tests.fakes.sessions import offline_bridge

READ = ToolCall("c1", "read_file", '{"path": "a.py"}')
RUN = ToolCall("c2", "run_command", '{"command": "make"}')
BROKEN = ToolCall("c3", "edit_file", "{not json")


def history() -> Conversation:
    return Conversation(
        [
            Message.user("go"),
            Message.assistant("", (READ,)),
            Message.tool_result("c1", "print(1)"),
            Message.assistant("", (RUN, BROKEN)),
            Message.tool_result("c2", "denied by you", status="denied"),
        ]
    )


def book_for(conversation: Conversation, source: str = "main") -> CallBook:
    return CallBook(offline_bridge(conversation, source=source))


def test_a_reopened_conversation_gives_each_call_its_leg_status_and_result() -> None:
    book = book_for(history(), source="worker 1")
    rows = [
        (r.call.id, r.leg, r.status, r.result, r.summary, r.source) for r in book.records.values()
    ]
    assert rows == [
        ("c1", 1, "ok", "print(1)", "a.py", "worker 1"),
        ("c2", 2, "denied", "denied by you", "make", "worker 1"),
        ("c3", 2, "requested", "", "(arguments are not valid JSON)", "worker 1"),
    ]
    assert book.records["c3"].arguments is None
    assert book.get("nope") is None and book.pending() == []


def test_stored_records_bring_duration_decision_and_cut_calls() -> None:
    book = book_for(history())
    changed = book.apply_stored(
        [
            ToolCallRecord("c1", "read_file", "{}", "ok", "auto", "ok", None, duration=0.5),
            ToolCallRecord("c3", "edit_file", "{}", "running", "approved", None, "partial"),
            ToolCallRecord("zz", "read_file", "{}", "ok"),
        ]
    )
    assert changed == ["c1", "c3"]
    c1, c3 = book.records["c1"], book.records["c3"]
    assert (c1.status, c1.duration, c1.decision, c1.result) == ("ok", 0.5, "auto", "print(1)")
    assert (c3.status, c3.decision, c3.result) == ("interrupted", "approved", "partial")


def test_events_carry_a_call_from_request_to_its_result(qtbot: QtBot, qloop: QtEventLoop) -> None:
    bridge = offline_bridge()
    book = CallBook(bridge)
    added: list[str] = []
    changed: list[str] = []
    book.added.connect(added.append)
    book.changed.connect(changed.append)
    call = ToolCall("w1", "write_file", '{"path": "b.txt", "content": "x"}')
    loop = bridge.session.reducer
    loop.apply(LegStarted(1))
    loop.apply(MessageAdded(Message.assistant("", (call,))))
    loop.apply(ToolCallRequested(call))
    qtbot.waitUntil(lambda: added == ["w1"])  # the book hears the thread once a frame
    assert book.records["w1"].leg == 1
    assert book.records["w1"].status == "requested"

    request = ApprovalRequest(call, {"path": "b.txt", "content": "x"}, future=qloop.create_future())
    loop.apply(ApprovalNeeded(request))
    record = book.records["w1"]
    qtbot.waitUntil(lambda: record.status == "waiting")
    assert record.awaiting_person
    assert book.pending() == [record]

    request.approve("session")
    qloop.run_until_complete(asyncio.sleep(0))  # the future's callbacks run on the loop
    qtbot.waitUntil(lambda: record.decision == "approved:session")
    assert not record.awaiting_person
    loop.apply(ToolCallStarted(call))
    qtbot.waitUntil(lambda: record.status == "running")
    assert record.started_at is not None
    loop.apply(ToolCallFinished(call, "ok", "wrote 1 byte", 0.02))
    qtbot.waitUntil(lambda: record.status == "ok")
    assert (record.status, record.result, record.duration) == ("ok", "wrote 1 byte", 0.02)
    assert changed == ["w1"] * 4


def test_a_denial_is_recorded_and_an_unknown_call_is_added_when_first_seen(
    qtbot: QtBot, qloop: QtEventLoop
) -> None:
    bridge = offline_bridge()
    book = CallBook(bridge)
    added: list[str] = []
    book.added.connect(added.append)
    request = ApprovalRequest(RUN, {"command": "make"}, future=qloop.create_future())
    bridge.session.reducer.apply(ApprovalNeeded(request))
    qtbot.waitUntil(lambda: added == ["c2"])  # the book hears the thread once a frame
    assert book.records["c2"].status == "waiting"
    request.deny("not now")
    qloop.run_until_complete(asyncio.sleep(0))
    qtbot.waitUntil(lambda: book.records["c2"].decision == "denied")
