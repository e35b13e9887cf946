"""The inspector's call list on a long reopened conversation: its rows are made a slice
per tick after the first few, in the calls' order, with the stored labels; a row asked
for is there at once; calls of the going-on conversation come after the reopened ones."""

from __future__ import annotations

from pytestqt.qtbot import QtBot

from melgui.core.protocol.calls import format_duration
from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.loop_events import ToolCallRequested
from melgui.core.protocol.messages import Conversation, Message
from melgui.core.store.records import ToolCallRecord
from melgui.ui.inspector.call_list import FIRST_ROWS
from melgui.ui.inspector.inspector import Inspector
from tests.fakes.sessions import offline_bridge

CALLS = 3 * FIRST_ROWS


def reopened(count: int) -> tuple[Conversation, list[ToolCallRecord]]:
    messages: list[Message] = [Message.user("go")]
    records = []
    for n in range(count):
        call = ToolCall(f"c{n}", "read_file", f'{{"path": "m{n}.py"}}')
        messages += [Message.assistant("", (call,)), Message.tool_result(call.id, "x")]
        records.append(
            ToolCallRecord(
                call.id, call.name, call.arguments, "ok", "auto", "ok", "x", duration=1.5
            )
        )
    return Conversation(messages), records


def rows(inspector: Inspector) -> list[str]:
    calls = inspector.calls
    return [calls.item(row).text() for row in range(calls.count())]


def test_a_long_list_is_made_in_slices_in_order(qtbot: QtBot) -> None:
    conversation, records = reopened(CALLS)
    bridge = offline_bridge(conversation)
    inspector = Inspector(bridge)
    qtbot.addWidget(inspector)
    inspector.load_stored(records)
    assert 0 < inspector.calls.count() < CALLS  # the rest comes on later ticks
    bridge.session.reducer.apply(ToolCallRequested(ToolCall("new", "ls", "{}")))
    bridge.flush()  # the inspector hears it now, while the rows are still being made
    assert not inspector.calls.complete

    qtbot.waitUntil(lambda: inspector.calls.complete)
    shown = rows(inspector)
    assert len(shown) == CALLS + 1
    assert [text.split()[2] for text in shown[:-1]] == [f"m{n}.py" for n in range(CALLS)]
    assert all(text.endswith(f"· {format_duration(1.5)}") for text in shown[:-1])
    assert shown[-1].split()[1] == "ls"  # the going-on conversation's call comes last


def test_a_row_asked_for_is_made_at_once(qtbot: QtBot) -> None:
    conversation, records = reopened(CALLS)
    inspector = Inspector(offline_bridge(conversation))
    qtbot.addWidget(inspector)
    inspector.load_stored(records)
    last = f"c{CALLS - 1}"

    inspector.show_call(last)

    assert inspector.calls.complete and inspector.calls.count() == CALLS
    assert inspector.current_record() is inspector.book.records[last]
    assert "m0.py" in rows(inspector)[0] and f"m{CALLS - 1}.py" in rows(inspector)[-1]


def test_a_short_list_is_complete_at_once(qtbot: QtBot) -> None:
    conversation, records = reopened(3)
    inspector = Inspector(offline_bridge(conversation))
    qtbot.addWidget(inspector)
    assert inspector.calls.complete and inspector.calls.count() == 3
    inspector.load_stored(records)
    assert all(text.endswith(f"· {format_duration(1.5)}") for text in rows(inspector))
