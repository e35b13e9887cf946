"""Conversations per folder: titles, order, rename, soft delete with undo, search."""

from __future__ import annotations

from pathlib import Path

import pytest

from melgui.core.protocol.events import ToolCall, WireEntry
from melgui.core.protocol.messages import Message
from melgui.core.store import Store, open_store, title_from
from melgui.core.store import schema as schema_module
from tests.fakes.clocks import FakeClock, step_clock


@pytest.fixture
def store_clock() -> FakeClock:
    return step_clock()


def test_title_comes_from_the_first_user_message(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.system("You are helpful."))
    store.put_message(cid, 1, Message.user("\n  Fix   the login bug\nin auth.py"))
    store.put_message(cid, 2, Message.user("and another thing"))
    summary = store.summary(cid)
    assert summary is not None and summary.title == "Fix the login bug"


def test_long_titles_are_cut() -> None:
    title = title_from("word " * 100)
    assert len(title) <= 80 and title.endswith("…")


def test_rename_and_reset_to_automatic(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("first words"))
    store.rename(cid, "  My   name ")
    assert (s := store.summary(cid)) is not None and s.title == "My name" and s.title_custom
    store.put_message(cid, 1, Message.user("more"))
    assert (s := store.summary(cid)) is not None and s.title == "My name"
    store.rename(cid, "")
    assert (s := store.summary(cid)) is not None and s.title == "first words"
    assert not s.title_custom


def test_conversations_are_per_folder_newest_first(store: Store, tmp_path: Path) -> None:
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    a = store.create_conversation(str(one))
    b = store.create_conversation(str(one))
    c = store.create_conversation(str(two))
    store.put_message(a, 0, Message.user("later activity"))
    assert [s.id for s in store.conversations(str(one))] == [a, b]
    assert [s.id for s in store.conversations(str(two))] == [c]
    # The same folder spelled differently is the same project.
    assert [s.id for s in store.conversations(str(one / ".." / "one"))] == [a, b]
    assert [s.id for s in store.conversations(str(one), limit=1)] == [a]
    # What a history list shows: not the conversations nothing was said in yet.
    assert [s.id for s in store.conversations(str(one), empty=False)] == [a]
    assert store.conversations(str(two), empty=False) == []
    assert [s.id for s in store.conversations(str(two), empty=False, keep=c)] == [c]


def test_soft_delete_hides_and_undo_restores(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("keep me"))
    store.delete(cid)
    assert store.conversations(str(tmp_path)) == []
    assert store.messages(cid)  # nothing is lost while it can be undone
    store.undelete(cid)
    assert [s.id for s in store.conversations(str(tmp_path))] == [cid]


def test_purge_removes_only_old_deletions(store: Store, tmp_path: Path) -> None:
    old = store.create_conversation(str(tmp_path))
    recent = store.create_conversation(str(tmp_path))
    store.delete(old)
    store.delete(recent)
    assert store.purge_deleted(older_than=1.5) == 1  # the clock moves 1 s per read
    assert not store.exists(old) and store.exists(recent)


def test_partial_row_is_replaced_in_place(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("q"))
    store.put_message(cid, 1, Message.assistant("Hel"), partial=True)
    store.put_message(cid, 1, Message.assistant("Hello there"), partial=True)
    assert [(m.message.content, m.partial) for m in store.messages(cid)] == [
        ("q", False),
        ("Hello there", True),
    ]
    calls = (ToolCall("c1", "read_file", '{"path": "a"}'),)
    store.put_message(cid, 1, Message.assistant("Hello there!", calls))
    stored = store.messages(cid)
    assert stored[1].message == Message.assistant("Hello there!", calls)
    assert not stored[1].partial


def test_tool_call_lifecycle(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    call = ToolCall("c1", "run_command", '{"command": "ls"}')
    store.calls.requested(cid, call)
    store.calls.phase(cid, "c1", "waiting")
    store.calls.decided(cid, "c1", "approved:session")
    store.calls.phase(cid, "c1", "running")
    store.calls.finished(cid, "c1", "ok", "exit_code=0\n", 0.25)
    (record,) = store.calls.of(cid)
    assert (record.state, record.decision, record.result_status, record.result) == (
        "ok",
        "approved:session",
        "ok",
        "exit_code=0\n",
    )
    assert record.duration == 0.25 and record.decided_at is not None


def test_denied_call_records_the_decision(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.calls.requested(cid, ToolCall("c1", "write_file", "{}"))
    store.calls.finished(cid, "c1", "denied", "The user denied this write_file call.", 0.0)
    assert store.calls.of(cid)[0].decision == "denied"


def test_plans_wire_and_notes_are_kept_in_order(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.add_plan(cid, "Plan A", "- step 1")
    store.add_plan(cid, "Plan B", "- step 2", call_id="c9")
    store.wire.add(
        cid, [(1, WireEntry("request", "POST /x", 1.0)), (1, WireEntry("event", "e", 2.0))]
    )
    store.wire.add(cid, [(2, WireEntry("event", "f", 3.0))])
    store.add_note(cid, "repair", "History repaired.")
    assert [p.title for p in store.plans(cid)] == ["Plan A", "Plan B"]
    assert [w.text for w in store.wire.read(cid)] == ["POST /x", "e", "f"]
    assert [w.text for w in store.wire.read(cid, leg=2)] == ["f"]
    assert [n.text for n in store.notes(cid)] == ["History repaired."]


def _searchable(store: Store, folder: str) -> dict[str, str]:
    ids = {}
    for name, texts in {
        "pdf": ["How do I make a PDF?", "Use create_pdf with the report."],
        "auth": ["Fix the login bug", "The token expired in auth_module.py"],
        "percent": ["growth of 100% here", "ok"],
    }.items():
        cid = store.create_conversation(folder)
        for seq, text in enumerate(texts):
            message = Message.user(text) if seq % 2 == 0 else Message.assistant(text)
            store.put_message(cid, seq, message)
        ids[name] = cid
    return ids


@pytest.mark.parametrize("fts", [True, False], ids=["fts5", "like"])
def test_search_by_text(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fts: bool) -> None:
    if not fts:
        monkeypatch.setattr(schema_module, "fts5_available", lambda conn: False)
    store = open_store(tmp_path / "data")
    try:
        assert store.has_fts is fts
        ids = _searchable(store, str(tmp_path))
        folder = str(tmp_path)

        def found(query: str) -> set[str]:
            return {s.id for s in store.conversations(folder, query=query)}

        assert found("report") == {ids["pdf"]}  # in a message, not the title
        assert found("login") == {ids["auth"]}  # in the title
        assert found("TOKEN expired") == {ids["auth"]}
        assert found("100%") == {ids["percent"]}
        assert found("nothing-like-this") == set()
        assert found('"quotes" AND (') == set()  # no FTS syntax error reaches anyone
        store.delete(ids["pdf"])
        assert found("report") == set()
    finally:
        store.close()


def test_fts_follows_partial_rewrites(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.assistant("alpha"), partial=True)
    store.put_message(cid, 0, Message.assistant("beta"))
    assert store.conversations(str(tmp_path), query="alpha") == []
    assert [s.id for s in store.conversations(str(tmp_path), query="beta")] == [cid]


def test_recent_commands_span_conversations_newest_first_once_each(
    store: Store, tmp_path: Path
) -> None:
    first = store.create_conversation(str(tmp_path))
    second = store.create_conversation(str(tmp_path / "other"))
    gone = store.create_conversation(str(tmp_path))

    def run_command(cid: str, call_id: str, arguments: str) -> None:
        store.calls.requested(cid, ToolCall(call_id, "run_command", arguments))

    run_command(first, "a", '{"command": "git status"}')
    store.calls.requested(first, ToolCall("r", "read_file", '{"path": "x"}'))
    run_command(second, "b", '{"command": "pytest -q"}')
    run_command(first, "c", "not json")
    run_command(first, "d", '["a list"]')
    run_command(second, "e", '{"command": "git status"}')
    run_command(gone, "f", '{"command": "rm -rf build"}')
    store.delete(gone)
    run_command(first, "g", '{"command": "ls"}')
    assert store.calls.recent_commands() == ["ls", "git status", "pytest -q"]
    assert store.calls.recent_commands(limit=2) == ["ls", "git status"]


def test_a_wire_chunk_keeps_every_line_its_direction_text_and_time(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    start = 1_765_000_000.123456
    lines = [
        WireEntry("request", 'POST /v1/chat/completions {"model": "m"}', start),
        WireEntry("event", "data: line\nwith a newline, «unicode» and \\u0041", start + 0.0015),
        WireEntry("event", "", start + 2.5),  # an empty text is still a line
        WireEntry("response", "200 OK", start + 60.000001),
    ]
    store.wire.add_chunk(cid, 3, lines)
    store.wire.add_chunk(cid, 4, [])  # an empty chunk reads as no lines
    got = store.wire.read(cid)
    assert [(w.leg, w.direction, w.text) for w in got] == [(3, e.direction, e.text) for e in lines]
    assert all(abs(w.at - e.at) < 2e-6 for w, e in zip(got, lines, strict=True))


def test_a_wire_line_holding_the_chunk_separator_is_kept_whole(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    lines = [WireEntry("event", "a\x1eb", 1.0), WireEntry("event", "c", 2.0)]
    store.wire.add_chunk(cid, 1, lines)
    assert [w.text for w in store.wire.read(cid)] == ["a\x1eb", "c"]


def test_wire_chunks_stored_by_earlier_versions_still_read(store: Store, tmp_path: Path) -> None:
    cid = store.create_conversation(str(tmp_path))
    store._conn.execute(
        "INSERT INTO wire_chunks (conversation_id, leg, entries) VALUES (?, ?, ?)",
        (cid, 2, '[["request", "POST /x", 1.5], ["event", "e", 2]]'),
    )
    assert [(w.leg, w.direction, w.text, w.at) for w in store.wire.read(cid)] == [
        (2, "request", "POST /x", 1.5),
        (2, "event", "e", 2.0),
    ]


def test_wire_chunks_keep_each_line_s_time_and_direction_exactly(
    store: Store, tmp_path: Path
) -> None:
    cid = store.create_conversation(str(tmp_path))
    lines = [
        WireEntry("request", "POST /x", 1765080000.123456789),
        WireEntry("response", "HTTP 200 OK", 1765080000.5),
        WireEntry("event", "data: é", 1765080001.000001),
        WireEntry("note", "leg failed", 1765080002.25),
        WireEntry("sideways", "a direction without a letter", 1765080003.0),  # type: ignore[arg-type]
    ]
    store.wire.add_chunk(cid, 4, lines)
    store.wire.add_chunk(cid, 5, [])
    assert [(w.leg, w.direction, w.text, w.at) for w in store.wire.read(cid)] == [
        (4, e.direction, e.text, e.at) for e in lines
    ]


def test_wire_chunks_with_microseconds_after_a_start_still_read(
    store: Store, tmp_path: Path
) -> None:
    """The header form the journal wrote before the times became doubles in base64."""
    cid = store.create_conversation(str(tmp_path))
    header = '{"start": 100.5, "direction": ["request", "event"], "us": [0, 250000]}'
    store._conn.execute(
        "INSERT INTO wire_chunks (conversation_id, leg, entries) VALUES (?, ?, ?)",
        (cid, 1, header + "\nPOST /x\x1edata: {}"),
    )
    assert [(w.direction, w.text, w.at) for w in store.wire.read(cid)] == [
        ("request", "POST /x", 100.5),
        ("event", "data: {}", 100.75),
    ]


def test_melgui_s_own_key_never_reaches_a_stored_wire_chunk(store: Store, tmp_path: Path) -> None:
    from melgui.core.config import redaction

    cid = store.create_conversation(str(tmp_path))
    redaction.remember_secret("sk-wire-secret-123")
    try:
        lines = [WireEntry("event", 'echo {"key": "sk-wire-secret-123"}', 1.0)]
        lines.append(WireEntry("event", "escaped sk\\u002dwire-secret-123", 2.0))
        store.wire.add_chunk(cid, 1, lines)
    finally:
        redaction.forget_secrets()
    stored = store._conn.execute("SELECT entries FROM wire_chunks").fetchone()[0]
    assert "wire-secret" not in stored
    assert [w.text for w in store.wire.read(cid)] == [
        'echo {"key": "«redacted»"}',
        "escaped «redacted»",
    ]
