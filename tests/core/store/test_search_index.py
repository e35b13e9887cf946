"""An answer's search indexing runs after the turn's end, not inside its wait: the answer
is searchable once the indexing handed over is written, a journal's close (and so an
exiting `melgui exec`) leaves it indexed, and a row a process left unindexed is indexed
when the history is next opened."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import threading
from pathlib import Path

import pytest

from melgui.core.protocol.events import Done, TextDelta
from melgui.core.protocol.messages import Message
from melgui.core.store import Store, open_store
from melgui.core.store.database import OpenedDatabase, connect
from melgui.core.store.paths import database_path
from melgui.core.store.schema import MIGRATIONS, has_fts, migrate
from tests.core.store.test_journal import start
from tests.fakes import ScriptedOpenAI, done, text
from tests.fakes.replay import Leg

ROOT = Path(__file__).resolve().parents[3]


def found(store: Store, folder: Path, query: str) -> list[str]:
    return [s.id for s in store.conversations(str(folder), query=query)]


def unindexed(path: Path) -> int:
    conn = sqlite3.connect(path)
    try:
        return int(conn.execute("SELECT count(*) FROM messages WHERE indexed = 0").fetchone()[0])
    finally:
        conn.close()


async def test_the_turn_ends_before_its_answer_is_indexed_and_the_index_follows(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path / "data")
    if not store.has_fts:
        store.close()
        pytest.skip("this SQLite has no FTS5: search reads the rows themselves")
    legs: list[Leg] = [[TextDelta("The quokka "), TextDelta("smiles."), Done()]]
    session, journal, cid, _ = start(store, tmp_path, legs)
    # The indexing job is held on the writer thread until the turn has ended: a turn end
    # that waited on it would only go on once the hold timed out.
    release, indexing, held_out = threading.Event(), threading.Event(), threading.Event()
    index_pending = store.index_pending

    def held_index(conversation: str | None = None) -> int:
        indexing.set()
        if not release.wait(timeout=20):
            held_out.set()
        return index_pending(conversation)

    store.index_pending = held_index  # type: ignore[method-assign,assignment]
    session.submit("Tell me about quokkas")
    await session.wait_idle()
    assert not held_out.is_set()
    assert session.conversation.messages[-1].content == "The quokka smiles."
    # The answer is stored (a host's view reads it once the session is idle) ...
    assert store.behind is not None
    row = store.behind.submit(
        lambda: store._conn.execute(
            "SELECT content, partial FROM messages WHERE conversation_id = ? AND role ="
            " 'assistant'",
            (cid,),
        ).fetchall()
    )
    release.set()
    assert row.result(timeout=20) == [("The quokka smiles.", 0)]
    assert indexing.is_set()
    journal.close()  # waits for what was handed over, the indexing too
    assert found(store, tmp_path, "quokka") == [cid]
    assert found(store, tmp_path, "smiles") == [cid]
    assert store.path is not None and unindexed(store.path) == 0
    store.close()


def test_an_answer_left_unindexed_is_indexed_when_the_history_is_next_opened(
    tmp_path: Path,
) -> None:
    """A process stopped between an answer and its indexing: the next open indexes it."""
    data = tmp_path / "data"
    store = open_store(data)
    if not store.has_fts:
        store.close()
        pytest.skip("this SQLite has no FTS5")
    cid = store.create_conversation(str(tmp_path))
    store.put_message(cid, 0, Message.user("where is the wombat"))
    store.put_message(cid, 1, Message.assistant("burrowing underground"), indexed=False)
    assert found(store, tmp_path, "burrowing") == []  # not indexed: not found yet
    assert found(store, tmp_path, "wombat") == [cid]
    store.close()
    assert unindexed(database_path(data)) == 1
    store = open_store(data)
    try:
        assert found(store, tmp_path, "burrowing") == [cid]
        assert unindexed(database_path(data)) == 0
        # Rewritten, deleted: the index follows the row as before.
        store.put_message(cid, 1, Message.assistant("sleeping soundly"), indexed=False)
        assert found(store, tmp_path, "burrowing") == []
        assert store.index_pending(cid) == 1
        assert found(store, tmp_path, "sleeping") == [cid]
        store.drop_messages_from(cid, 1)
        assert found(store, tmp_path, "sleeping") == []
    finally:
        store.close()


def test_a_version_9_history_keeps_its_index_and_defers_new_answers(tmp_path: Path) -> None:
    path = database_path(tmp_path)
    conn = sqlite3.connect(path, isolation_level=None)
    migrate(conn, MIGRATIONS[:9])
    if not has_fts(conn):
        conn.close()
        pytest.skip("this SQLite has no FTS5")
    conn.execute(
        "INSERT INTO conversations (id, folder, created_at, updated_at) VALUES ('c', '/p', 1, 1)"
    )
    conn.execute(
        "INSERT INTO messages (conversation_id, seq, role, content, partial, created_at)"
        " VALUES ('c', 0, 'user', 'an older platypus', 0, 1)"
    )
    conn.close()
    store = Store(OpenedDatabase(connect(path), path))
    try:
        assert [s.id for s in store.conversations("/p", query="platypus")] == ["c"]
        store.put_message("c", 1, Message.assistant("a newer echidna"), indexed=False)
        assert store.conversations("/p", query="echidna") == []
        store.index_pending()
        assert [s.id for s in store.conversations("/p", query="echidna")] == ["c"]
    finally:
        store.close()


def test_melgui_exec_exits_with_its_answer_indexed(
    scripted_openai: ScriptedOpenAI, tmp_path: Path
) -> None:
    scripted_openai.script([text("The axolotl "), text("regrows its limbs."), done()])
    data = tmp_path / "data"
    folder = tmp_path / "project"
    folder.mkdir()
    command = [
        sys.executable, "-m", "melgui", "exec", "--transport", "openai",
        "--url", scripted_openai.base_url, "--model", "m", "--folder", str(folder),
        "what of the axolotl?",
    ]  # fmt: skip
    result = subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=120,
        env={**os.environ, "PYTHONPATH": str(ROOT), "MELGUI_DATA_DIR": str(data)},
        stdin=subprocess.DEVNULL,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The axolotl regrows its limbs.\n"
    # Read as it was left: no open (which would index what is pending) before the count.
    assert unindexed(database_path(data)) == 0
    store = Store.open(database_path(data))
    try:
        (conversation,) = store.conversations(str(folder))
        assert found(store, folder, "regrows") == [conversation.id]
    finally:
        store.close()
