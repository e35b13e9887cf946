"""The branch model: a replaced message list stays in history; later legs send the new one."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.agent.session import AgentSession
from melgui.core.protocol.events import Done, TextDelta, ToolCalls
from melgui.core.protocol.messages import Message
from melgui.core.store import Store
from melgui.core.store.journal import Journal
from melgui.core.store.resume import resume
from tests.fakes.replay import AskWrites, Leg, ReplayTransport, Tools, call


def start(store: Store, folder: Path, legs: list[Leg]) -> tuple[AgentSession, Journal, str]:
    cid = store.create_conversation(str(folder), model="m", role="assistant")
    journal = Journal(store, cid)
    session = AgentSession(
        ReplayTransport(legs), Tools(), AskWrites(), model="m", role="assistant", cwd=str(folder)
    )
    journal.attach(session)
    return session, journal, cid


async def test_a_rewind_keeps_the_old_list_and_later_legs_send_the_new_one(
    store: Store, tmp_path: Path
) -> None:
    legs: list[Leg] = [
        [TextDelta("reading"), ToolCalls((call("r1", "read_file", {"path": "a"}),))],
        [TextDelta("first answer"), Done()],
        [TextDelta("second answer"), Done()],
    ]
    session, journal, cid = start(store, tmp_path, legs)
    session.submit("first question")
    await session.wait_idle()
    before = list(session.conversation.messages)
    assert [m.role for m in before] == ["user", "assistant", "tool", "assistant"]

    session.branch([], "rewind", "Rewound to the start.")
    session.submit("edited question")
    await session.wait_idle()
    journal.close()

    stored = [s.message for s in store.messages(cid)]
    assert stored == session.conversation.messages
    assert [m.content for m in stored] == ["edited question", "second answer"]
    (branch,) = store.branches(cid)
    assert (branch.reason, branch.note, branch.messages) == ("rewind", "Rewound to the start.", 4)
    assert [s.message for s in store.branch_messages(branch.id)] == before
    # Reopened, the conversation is the new list.
    assert resume(store, cid).conversation.messages == stored


async def test_a_branch_that_would_break_pairing_is_refused(store: Store, tmp_path: Path) -> None:
    legs: list[Leg] = [
        [ToolCalls((call("r1", "read_file", {"path": "a"}),))],
        [TextDelta("done"), Done()],
    ]
    session, journal, cid = start(store, tmp_path, legs)
    session.submit("go")
    await session.wait_idle()
    messages = list(session.conversation.messages)
    with pytest.raises(ValueError, match="pairing"):
        session.branch(messages[:2], "compaction")  # the call without its result
    assert session.conversation.messages == messages
    assert store.branches(cid) == []
    journal.close()


async def test_branching_mid_turn_is_refused(store: Store, tmp_path: Path) -> None:
    session, journal, _ = start(store, tmp_path, [[TextDelta("x"), Done()]])
    session.submit("go")
    with pytest.raises(RuntimeError, match="while a turn runs"):
        session.branch([], "rewind")
    await session.wait_idle()
    journal.close()


def test_the_store_keeps_the_old_list_as_a_branch_and_writes_the_new_one(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path), model="m", role="assistant")
    other = store.create_conversation(str(tmp_path), model="m", role="assistant")
    for seq, text in enumerate(["first", "second", "third"]):
        store.put_message(cid, seq, Message.user(text))
    store.put_message(other, 0, Message.user("elsewhere"))
    store.put_message(cid, 3, Message.user("still streaming"), partial=True)
    first = store.branch(cid, [Message.user("first"), Message.user("edited")], "edit")
    second = store.branch(cid, [Message.user("again")], "rewind", note="back to the start")
    assert [m.message.content for m in store.messages(cid)] == ["again"]
    assert [m.seq for m in store.messages(cid)] == [0]
    assert [m.message.content for m in store.branch_messages(first)] == [
        "first",
        "second",
        "third",
    ]  # the partial message was never part of the list
    assert [m.message.content for m in store.branch_messages(second)] == ["first", "edited"]
    assert [(b.id, b.reason, b.note, b.messages) for b in store.branches(cid)] == [
        (first, "edit", "", 3),
        (second, "rewind", "back to the start", 2),
    ]
    assert [m.message.content for m in store.messages(other)] == ["elsewhere"]
    assert store.branches(other) == []
