"""Reopening what a crash left: partial text kept, open calls answered 'interrupted',
the repair written back and noted; an intact conversation is left as it was."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from melgui.core.protocol.events import ToolCall
from melgui.core.protocol.messages import INTERRUPTED_RESULT, Message
from melgui.core.store import Store, open_store
from melgui.core.store.resume import ConversationNotFoundError, resume
from melgui.desk.recording import UnknownConversationError, start_recording


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    opened = open_store(tmp_path / "data")
    yield opened
    opened.close()


def crashed_mid_tool(store: Store, folder: Path) -> str:
    """What the journal leaves when the app dies while the second of two calls runs."""
    cid = store.create_conversation(str(folder))
    calls = (ToolCall("a", "read_file", "{}"), ToolCall("b", "run_command", '{"command": "x"}'))
    store.put_message(cid, 0, Message.user("do it"))
    store.put_message(cid, 1, Message.assistant("On it.", calls))
    for call in calls:
        store.calls.requested(cid, call)
    store.calls.phase(cid, "a", "running")
    store.put_message(cid, 2, Message.tool_result("a", "contents"))  # killed before the record
    store.calls.phase(cid, "b", "running")
    return cid


def test_open_calls_get_interrupted_results(store: Store, tmp_path: Path) -> None:
    cid = crashed_mid_tool(store, tmp_path)
    resumed = resume(store, cid)
    assert resumed.conversation.messages[2:] == [
        Message.tool_result("a", "contents"),
        Message.tool_result("b", INTERRUPTED_RESULT, "interrupted"),
    ]
    assert resumed.repair.added_results == ("b",)
    assert resumed.repaired and "interrupted" in (resumed.describe() or "")
    records = {r.call_id: (r.state, r.result_status) for r in resumed.tool_calls}
    assert records == {"a": ("ok", "ok"), "b": ("interrupted", "interrupted")}
    assert [n.kind for n in resumed.notes] == ["repair"]
    # Written back: a second reopening finds nothing to repair and adds no note.
    assert [s.message for s in store.messages(cid)] == resumed.conversation.messages
    again = resume(store, cid)
    assert not again.repaired and again.describe() is None
    assert len(again.notes) == 1


def test_partial_answer_is_kept_as_the_answer(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("explain"))
    store.put_message(cid, 1, Message.assistant("It works like th"), partial=True)
    resumed = resume(store, cid)
    assert resumed.cut_text and not resumed.repair
    assert resumed.conversation.messages[-1] == Message.assistant("It works like th")
    assert not any(s.partial for s in store.messages(cid))
    assert "app stopped" in (resumed.describe() or "")


def test_intact_conversation_is_untouched(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("hi"))
    store.put_message(cid, 1, Message.assistant("hello"))
    store.add_plan(cid, "P", "- a")
    before = store.summary(cid)
    resumed = resume(store, cid)
    assert not resumed.repaired and resumed.notes == []
    assert [p.title for p in resumed.plans] == ["P"]
    assert store.summary(cid) == before


def test_unknown_id(store: Store) -> None:
    with pytest.raises(ConversationNotFoundError):
        resume(store, "nope")


def test_start_recording_new_continue_and_resume(store: Store, tmp_path: Path) -> None:
    first = start_recording(store, str(tmp_path), model="m1", role="worker")
    assert first.resumed is None and first.conversation.messages == []
    summary = store.summary(first.conversation_id)
    assert summary is not None and (summary.model, summary.role) == ("m1", "worker")
    cid = crashed_mid_tool(store, tmp_path)
    latest = start_recording(store, str(tmp_path), continue_latest=True, model="m2")
    assert latest.conversation_id == cid
    assert latest.resumed is not None and latest.resumed.repair
    assert any("interrupted" in line for line in latest.notices)
    assert (s := store.summary(cid)) is not None and s.model == "m2"
    by_prefix = start_recording(store, str(tmp_path), resume_id=first.conversation_id[:8])
    assert by_prefix.conversation_id == first.conversation_id
    with pytest.raises(UnknownConversationError, match="no stored conversation"):
        start_recording(store, str(tmp_path), resume_id="zzzz")


def test_continue_with_nothing_stored_starts_a_new_conversation(
    store: Store, tmp_path: Path
) -> None:
    recording = start_recording(store, str(tmp_path), continue_latest=True)
    assert recording.resumed is None and store.exists(recording.conversation_id)
