"""Opening the history: WAL, data folder, migrations, and starting anyway on a bad file."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from melgui.core.store import open_store
from melgui.core.store.database import connect
from melgui.core.store.paths import DATA_DIR_ENV, data_dir, database_path
from melgui.core.store.schema import SCHEMA_VERSION, migrate, schema_version


def test_data_dir_follows_the_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(DATA_DIR_ENV, str(tmp_path / "elsewhere"))
    assert data_dir() == tmp_path / "elsewhere"
    store = open_store()
    try:
        assert store.path == tmp_path / "elsewhere" / "history.sqlite3"
        assert store.notice is None
    finally:
        store.close()


def test_new_database_is_wal_and_current(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.close()
    conn = sqlite3.connect(database_path(tmp_path))
    assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert schema_version(conn) == SCHEMA_VERSION
    conn.close()


def test_migrations_run_once_in_order_from_an_older_version(tmp_path: Path) -> None:
    ran: list[int] = []

    def first(conn: sqlite3.Connection) -> None:
        ran.append(1)
        conn.execute("CREATE TABLE a (x)")

    def second(conn: sqlite3.Connection) -> None:
        ran.append(2)
        conn.execute("ALTER TABLE a ADD COLUMN y")

    conn = sqlite3.connect(tmp_path / "db", isolation_level=None)
    assert migrate(conn, (first,)) == 1
    assert migrate(conn, (first, second)) == 2
    assert migrate(conn, (first, second)) == 2
    assert ran == [1, 2]
    conn.close()


def test_a_failing_migration_leaves_the_old_version(tmp_path: Path) -> None:
    def broken(conn: sqlite3.Connection) -> None:
        conn.execute("CREATE TABLE b (x)")
        raise sqlite3.OperationalError("boom")

    conn = sqlite3.connect(tmp_path / "db", isolation_level=None)
    with pytest.raises(sqlite3.OperationalError):
        migrate(conn, (broken,))
    assert schema_version(conn) == 0
    assert conn.execute("SELECT name FROM sqlite_master WHERE name = 'b'").fetchone() is None
    conn.close()


def test_garbage_file_is_moved_aside_and_a_new_history_starts(tmp_path: Path) -> None:
    path = database_path(tmp_path)
    garbage = b"this is not sqlite at all " * 200
    path.write_bytes(garbage)
    store = open_store(tmp_path)
    try:
        assert store.notice is not None
        assert "damaged" in store.notice
        cid = store.create_conversation(str(tmp_path))
        assert store.exists(cid)
    finally:
        store.close()
    aside = [p for p in tmp_path.iterdir() if ".damaged-" in p.name]
    assert len(aside) == 1
    assert aside[0].read_bytes() == garbage
    assert aside[0].name in (store.notice or "")


def test_corrupt_pages_are_detected_and_kept(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    cid = store.create_conversation(str(tmp_path))
    from melgui.core.protocol.messages import Message

    for seq in range(200):
        store.put_message(cid, seq, Message.user("hello " * 50))
    store.close()
    path = database_path(tmp_path)
    data = bytearray(path.read_bytes())
    for offset in range(4096 * 2, len(data), 4096):  # scribble over every page after the 2nd
        data[offset + 8 : offset + 64] = b"\xff" * 56
    path.write_bytes(bytes(data))
    damaged = bytes(data)
    store = open_store(tmp_path)
    try:
        assert store.notice is not None and "damaged" in store.notice
        assert store.conversations(str(tmp_path)) == []
    finally:
        store.close()
    kept = [p for p in tmp_path.iterdir() if p.name.startswith("history.sqlite3.damaged-")]
    assert [p.read_bytes() for p in kept if not p.name.endswith(("-wal", "-shm"))] == [damaged]


def test_a_second_damaged_file_never_overwrites_the_first(tmp_path: Path) -> None:
    path = database_path(tmp_path)
    for content in (b"first bad file" * 100, b"second bad file" * 100):
        path.write_bytes(content)
        open_store(tmp_path).close()
        path.unlink()
        for extra in tmp_path.glob("history.sqlite3-*"):
            extra.unlink()
    kept = sorted(p.read_bytes() for p in tmp_path.glob("history.sqlite3.damaged-*"))
    assert kept == sorted([b"first bad file" * 100, b"second bad file" * 100])


def test_locked_database_starts_on_a_fallback_and_leaves_the_file(tmp_path: Path) -> None:
    path = database_path(tmp_path)
    open_store(tmp_path).close()
    holder = sqlite3.connect(path, isolation_level=None)
    holder.execute("PRAGMA locking_mode = EXCLUSIVE")
    holder.execute("BEGIN EXCLUSIVE")
    try:
        from melgui.core.store import Store

        store = Store.open(path, busy_timeout_ms=100)
        try:
            assert store.notice is not None and "locked" in store.notice
            assert store.path is not None and store.path != path
            store.create_conversation(str(tmp_path))  # this run still keeps its work
        finally:
            store.close()
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert connect(path).execute("SELECT count(*) FROM conversations").fetchone()[0] == 0


def test_database_from_a_newer_melgui_is_not_touched(tmp_path: Path) -> None:
    path = database_path(tmp_path)
    open_store(tmp_path).close()
    conn = sqlite3.connect(path)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 5}")
    conn.close()
    store = open_store(tmp_path)
    try:
        assert store.notice is not None and "newer" in store.notice
        assert store.path != path
    finally:
        store.close()
    conn = sqlite3.connect(path)
    assert schema_version(conn) == SCHEMA_VERSION + 5
    conn.close()


def test_unusable_folder_gives_a_memory_store_with_a_message(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    store = open_store(blocker / "sub")  # a folder below a file cannot exist
    try:
        assert store.path is None
        assert "History cannot be kept" in (store.notice or "")
        store.create_conversation(str(tmp_path))
    finally:
        store.close()


def test_version_2_history_migrates_its_wire_log_and_search_index(tmp_path: Path) -> None:
    from melgui.core.store import Store
    from melgui.core.store.database import OpenedDatabase
    from melgui.core.store.schema import MIGRATIONS

    path = database_path(tmp_path)
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, MIGRATIONS[:2])
    conn.execute(
        "INSERT INTO conversations (id, folder, created_at, updated_at) VALUES ('c', '/p', 1, 1)"
    )
    conn.executemany(
        "INSERT INTO messages (conversation_id, seq, role, content, partial, created_at)"
        " VALUES ('c', ?, ?, ?, ?, 1)",
        [(0, "user", "final words", 0), (1, "assistant", "halfway words", 1)],
    )
    conn.executemany(
        "INSERT INTO wire_log (conversation_id, leg, direction, text, at) VALUES ('c', ?, ?, ?, ?)",
        [(1, "request", "POST", 1.0), (1, "event", "delta", 2.0), (2, "request", "POST 2", 3.0)],
    )
    conn.close()
    store = Store(OpenedDatabase(connect(path), path))
    try:
        assert [(w.leg, w.direction, w.text, w.at) for w in store.wire.read("c")] == [
            (1, "request", "POST", 1.0),
            (1, "event", "delta", 2.0),
            (2, "request", "POST 2", 3.0),
        ]
        assert [s.id for s in store.conversations("/p", query="final")] == ["c"]
        assert store.conversations("/p", query="halfway") == []  # partial rows wait
    finally:
        store.close()


def test_version_4_call_states_become_call_phases(tmp_path: Path) -> None:
    from melgui.core.store import Store
    from melgui.core.store.database import OpenedDatabase
    from melgui.core.store.schema import MIGRATIONS

    path = database_path(tmp_path)
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, MIGRATIONS[:4])
    conn.execute(
        "INSERT INTO conversations (id, folder, created_at, updated_at) VALUES ('c', '/p', 1, 1)"
    )
    conn.executemany(
        "INSERT INTO tool_calls (conversation_id, call_id, name, arguments, state,"
        " result_status, requested_at) VALUES ('c', ?, 'read_file', '{}', ?, ?, 1)",
        [
            ("a", "done", "ok"),
            ("b", "done", "denied"),
            ("c", "awaiting_approval", None),
            ("d", "running", None),
            ("e", "done", None),
        ],
    )
    conn.close()
    store = Store(OpenedDatabase(connect(path), path))
    try:
        assert [(r.call_id, r.state) for r in store.calls.of("c")] == [
            ("a", "ok"),
            ("b", "denied"),
            ("c", "waiting"),
            ("d", "running"),
            ("e", "interrupted"),
        ]
    finally:
        store.close()
