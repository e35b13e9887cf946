"""What the store says about a conversation, under a clock that moves only when told:
its summary field by field, titles, ids by prefix, model and role, branches, search."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.protocol.messages import Message
from melgui.core.store import ConversationSummary, Store, title_from
from melgui.core.store.records import BranchRecord, StoredMessage
from melgui.core.store.store import TITLE_LENGTH
from tests.fakes.clocks import FakeClock


@pytest.fixture
def store_clock() -> FakeClock:
    return FakeClock(1_000.0)


def test_a_summary_is_the_conversations_row(
    store: Store, store_clock: FakeClock, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path / "." / ""), model="m-1", role="worker")
    assert store.summary(cid) == ConversationSummary(
        id=cid,
        folder=str(tmp_path.resolve()),
        title="",
        created_at=1_000.0,
        updated_at=1_000.0,
        model="m-1",
        role="worker",
        deleted_at=None,
        title_custom=False,
    )
    store_clock.now = 1_500.0
    store.put_message(cid, 0, Message.user("hello"))
    store_clock.now = 2_000.0
    store.delete(cid)
    summary = store.summary(cid)
    assert summary is not None
    assert (summary.title, summary.created_at, summary.updated_at, summary.deleted_at) == (
        "hello",
        1_000.0,
        1_500.0,
        2_000.0,
    )
    store.undelete(cid)
    assert (s := store.summary(cid)) is not None and s.deleted_at is None
    assert store.summary("no-such-id") is None


def test_a_new_conversation_has_no_model_role_or_title_until_given(
    store: Store, tmp_path: Path
) -> None:
    summary = store.summary(store.create_conversation(str(tmp_path)))
    assert summary is not None
    assert (summary.model, summary.role, summary.title, summary.title_custom) == ("", "", "", False)


def test_a_conversation_can_be_made_with_its_own_id_time_and_title(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(
        str(tmp_path), title="Imported", conversation_id="abc", created_at=42.0
    )
    assert cid == "abc" and store.exists("abc") and not store.exists("abd")
    summary = store.summary("abc")
    assert summary is not None
    assert (summary.title, summary.title_custom, summary.created_at, summary.updated_at) == (
        "Imported",
        True,
        42.0,
        42.0,
    )
    store.put_message(cid, 0, Message.user("a first message does not retitle it"))
    assert (s := store.summary(cid)) is not None and s.title == "Imported"


def test_stored_messages_keep_their_position_and_time(
    store: Store, store_clock: FakeClock, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    store_clock.now = 1_100.0
    store.put_message(cid, 0, Message.user("q"))
    store_clock.now = 1_200.0
    store.put_message(cid, 1, Message.assistant("a"), partial=True)
    assert store.messages(cid) == [
        StoredMessage(0, Message.user("q"), False, 1_100.0),
        StoredMessage(1, Message.assistant("a"), True, 1_200.0),
    ]


@pytest.mark.parametrize(
    ("text", "title"),
    [
        ("", ""),
        ("\n   \n\t\n", ""),
        ("  Fix\tthe   bug \nsecond line", "Fix the bug"),
        ("x" * TITLE_LENGTH, "x" * TITLE_LENGTH),
        ("x" * (TITLE_LENGTH + 1), "x" * (TITLE_LENGTH - 1) + "…"),
        ("word " * 30, ("word " * 16).rstrip() + "…"),
        ("x" * (TITLE_LENGTH - 2) + " tail", "x" * (TITLE_LENGTH - 2) + "…"),
    ],
    ids=[
        "empty",
        "blank-lines",
        "collapsed",
        "exactly-80",
        "81",
        "cut-in-a-word",
        "cut-at-a-space",
    ],
)
def test_title_rules(text: str, title: str) -> None:
    assert title_from(text) == title
    assert len(title_from(text)) <= TITLE_LENGTH


def test_the_title_comes_from_the_first_whole_user_message(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("streaming draft"), partial=True)
    assert (s := store.summary(cid)) is not None and s.title == ""
    store.put_message(cid, 0, Message.assistant("not from the assistant"))
    assert (s := store.summary(cid)) is not None and s.title == ""
    store.put_message(cid, 1, Message.user("the question"))
    store.put_message(cid, 2, Message.user("a later one"))
    assert (s := store.summary(cid)) is not None and s.title == "the question"
    assert not s.title_custom


def test_resetting_a_title_goes_back_to_the_first_user_message_by_position(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.system("You are helpful."))
    store.put_message(cid, 2, Message.user("second question"))
    store.put_message(cid, 1, Message.user("first question"))
    store.put_message(cid, 3, Message.assistant("an answer"))
    store.rename(cid, "Chosen")
    assert (s := store.summary(cid)) is not None and (s.title, s.title_custom) == ("Chosen", True)
    store.rename(cid, "   ")
    assert (s := store.summary(cid)) is not None
    assert (s.title, s.title_custom) == ("first question", False)
    empty = store.create_conversation(str(tmp_path))
    store.rename(empty, "Named")
    store.rename(empty, "")
    assert (s := store.summary(empty)) is not None and (s.title, s.title_custom) == ("", False)


def test_renaming_one_conversation_leaves_the_others(store: Store, tmp_path: Path) -> None:
    one = store.create_conversation(str(tmp_path), title="One")
    two = store.create_conversation(str(tmp_path), title="Two")
    store.put_message(two, 0, Message.user("two's question"))
    store.rename(one, "Renamed")
    store.rename(two, "")
    assert [(s.id, s.title) for s in store.conversations(str(tmp_path))] == [
        (two, "two's question"),
        (one, "Renamed"),
    ]


def test_ids_starting_with_a_prefix(store: Store, tmp_path: Path) -> None:
    for cid in ("abc1", "abc2", "abc3", "abd", "xabc", "a_c", "a%c"):
        store.create_conversation(str(tmp_path), conversation_id=cid)
    assert sorted(store.ids_starting_with("abc")) == ["abc1", "abc2", "abc3"]
    assert len(store.ids_starting_with("abc", limit=2)) == 2
    assert store.ids_starting_with("abc", limit=3) != store.ids_starting_with("abc", limit=2)
    assert store.ids_starting_with("a_") == ["a_c"]  # no LIKE wildcards
    assert store.ids_starting_with("a%") == ["a%c"]
    assert store.ids_starting_with("abd") == ["abd"]
    assert store.ids_starting_with("zzz") == []
    assert store.ids_starting_with("") == []  # not every id
    for n in range(12):
        store.create_conversation(str(tmp_path), conversation_id=f"many{n}")
    assert len(store.ids_starting_with("many")) == 10  # the default limit


def test_model_and_role_are_set_apart(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path), model="m-1", role="assistant")
    other = store.create_conversation(str(tmp_path), model="m-1", role="assistant")

    def model_role(conversation_id: str) -> tuple[str, str]:
        summary = store.summary(conversation_id)
        assert summary is not None
        return summary.model, summary.role

    store.set_model(cid, model="m-2")
    assert model_role(cid) == ("m-2", "assistant")
    store.set_model(cid, role="worker")
    assert model_role(cid) == ("m-2", "worker")
    store.set_model(cid, model="m-3", role="planner")
    assert model_role(cid) == ("m-3", "planner")
    store.set_model(cid)
    assert model_role(cid) == ("m-3", "planner")
    assert model_role(other) == ("m-1", "assistant")


def test_deleting_and_restoring_touch_only_that_conversation(store: Store, tmp_path: Path) -> None:
    one = store.create_conversation(str(tmp_path))
    two = store.create_conversation(str(tmp_path))
    store.delete(one)
    store.delete(two)
    store.undelete(one)
    assert [s.id for s in store.conversations(str(tmp_path))] == [one]
    assert (s := store.summary(two)) is not None and s.deleted_at == 1_000.0


def test_branches_are_listed_with_their_reason_note_time_and_size(
    store: Store, store_clock: FakeClock, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    other = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("q1"))
    store.put_message(cid, 1, Message.assistant("a1"))
    store.put_message(cid, 2, Message.assistant("a2 strea"), partial=True)
    store.put_message(other, 0, Message.user("other"))
    store_clock.now = 1_700.0
    first = store.branch(cid, [Message.user("q2")], "edit", "Edited the question.")
    store_clock.now = 1_800.0
    second = store.branch(cid, [], "rewind")
    assert store.branches(cid) == [
        BranchRecord(first, "edit", "Edited the question.", 1_700.0, 2),
        BranchRecord(second, "rewind", "", 1_800.0, 1),
    ]
    assert store.branches(other) == []
    # A partial row (text cut off while streaming) is not kept in the branch.
    assert [(s.seq, s.message, s.partial) for s in store.branch_messages(first)] == [
        (0, Message.user("q1"), False),
        (1, Message.assistant("a1"), False),
    ]
    assert [s.message for s in store.branch_messages(second)] == [Message.user("q2")]
    assert store.messages(cid) == []
    assert [s.message.content for s in store.messages(other)] == ["other"]


LITERAL = {
    "under": "call a_b now",
    "plain": "call axb now",
    "percent": "50% off",
    "fifty": "500 off",
    "slash": "C:\\temp\\x",
    "other": "C:tempx",
}


def literal_search(store: Store, folder: Path, *, in_titles: bool) -> None:
    """Conversations holding LITERAL's texts (as titles or as messages) are found by
    exactly the text searched for: `_`, `%` and `\\` are no wildcards."""
    ids = {}
    for name, text in LITERAL.items():
        cid = store.create_conversation(str(folder), title=text if in_titles else name)
        if not in_titles:
            store.put_message(cid, 0, Message.assistant(text))
        ids[name] = cid

    def found(query: str) -> set[str]:
        return {s.id for s in store.conversations(str(folder), query=query)}

    assert found("a_b") == {ids["under"]}
    assert found("50%") == {ids["percent"]}
    assert found("\\temp\\") == {ids["slash"]}
    assert found("axb") == {ids["plain"]}
    assert found("nothing") == set()


def test_searching_titles_takes_wildcards_literally(store: Store, tmp_path: Path) -> None:
    literal_search(store, tmp_path, in_titles=True)


def test_searching_messages_without_fts_takes_wildcards_literally(
    store: Store, tmp_path: Path
) -> None:
    store.has_fts = False  # an SQLite built without FTS5: messages are searched with LIKE
    literal_search(store, tmp_path, in_titles=False)
    assert {s.title for s in store.conversations(str(tmp_path), query="under")} == {"under"}


def test_searching_messages_with_fts_matches_word_prefixes(store: Store, tmp_path: Path) -> None:
    texts = {
        "prefix": "the tokenizer splits words",
        "word": "token",
        "both": "a broken token",
        "neither": "other",
    }
    for title, text in texts.items():
        cid = store.create_conversation(str(tmp_path), title=title)
        store.put_message(cid, 0, Message.assistant(text))

    def found(query: str) -> set[str]:
        return {s.title for s in store.conversations(str(tmp_path), query=query)}

    assert found("token") == {"prefix", "word", "both"}
    assert found("broken TOKEN") == {"both"}
