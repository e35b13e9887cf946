"""Messages keep the wire shape of docs/tools.md, and repair makes any history valid."""

from __future__ import annotations

import pytest

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import Conversation, Message


def test_wire_shapes() -> None:
    calls = (ToolCall("c1", "read_file", '{"path":"a"}'),)
    assert Message.user("hi").to_wire() == {"role": "user", "content": "hi"}
    assert Message.assistant("", calls).to_wire() == {
        "role": "assistant",
        "content": None,
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "read_file", "arguments": '{"path":"a"}'},
            }
        ],
    }
    assert Message.tool_result("c1", "text", "denied").to_wire() == {
        "role": "tool", "content": "text", "tool_call_id": "c1",
    }  # fmt: skip


@pytest.mark.parametrize(
    "message",
    [
        Message.system("be brief"),
        Message.user("hi"),
        Message.assistant("plain"),
        Message.assistant(
            "", (ToolCall("a", "grep", '{"pattern":"x"}'), ToolCall("b", "list_dir", ""))
        ),
        Message.tool_result("a", "result", "error"),
    ],
)
def test_json_round_trip(message: Message) -> None:
    assert Message.from_json(message.to_json()) == message


def test_from_json_rejects_garbage() -> None:
    with pytest.raises(ValueError, match="unknown role"):
        Message.from_json({"role": "wizard"})
    with pytest.raises(ValueError, match="unknown status"):
        Message.from_json({"role": "tool", "tool_call_id": "a", "status": "great"})


def test_repair_adds_missing_results_in_call_order_and_drops_orphans() -> None:
    calls = (ToolCall("a", "grep", "{}"), ToolCall("b", "grep", "{}"), ToolCall("c", "grep", "{}"))
    conversation = Conversation(
        [
            Message.tool_result("zz", "orphan before anything"),
            Message.user("hi"),
            Message.assistant("", calls),
            Message.tool_result("c", "third"),
            Message.tool_result("a", "first"),
            Message.tool_result("a", "first again"),
            Message.user("next"),
        ]
    )
    repair = conversation.repair_pairing()
    assert repair.added_results == ("b",)
    assert set(repair.dropped_results) == {"zz", "a"}
    assert "History repaired" in repair.describe()
    roles = [(m.role, m.tool_call_id, m.status) for m in conversation.messages]
    assert roles == [
        ("user", None, None),
        ("assistant", None, None),
        ("tool", "a", "ok"),
        ("tool", "b", "interrupted"),
        ("tool", "c", "ok"),
        ("user", None, None),
    ]
    assert not conversation.repair_pairing()


def test_pending_call_ids() -> None:
    calls = (ToolCall("a", "grep", "{}"), ToolCall("b", "grep", "{}"))
    conversation = Conversation([Message.user("x"), Message.assistant("", calls)])
    assert conversation.pending_call_ids() == ["a", "b"]
    conversation.append(Message.tool_result("a", "ok"))
    assert conversation.pending_call_ids() == ["b"]
    conversation.append(Message.tool_result("b", "ok"))
    conversation.append(Message.assistant("done"))
    assert conversation.pending_call_ids() == []
