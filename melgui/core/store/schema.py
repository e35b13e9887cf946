"""The history schema, versioned by `PRAGMA user_version`, with forward migrations.

Each migration runs once, in order, inside one transaction; a database written by
a newer melgui (higher version than we know) is left untouched.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable

Migration = Callable[[sqlite3.Connection], None]


class NewerSchemaError(Exception):
    """The database was written by a newer melgui; we must not touch it."""


def _v1_tables(conn: sqlite3.Connection) -> None:
    _run_script(
        conn,
        """
        CREATE TABLE conversations (
            id TEXT PRIMARY KEY,
            folder TEXT NOT NULL,
            title TEXT NOT NULL DEFAULT '',
            title_custom INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            updated_at REAL NOT NULL,
            deleted_at REAL,
            model TEXT NOT NULL DEFAULT '',
            role TEXT NOT NULL DEFAULT ''
        );
        CREATE INDEX conversations_by_folder
            ON conversations (folder, deleted_at, updated_at DESC);

        CREATE TABLE messages (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL DEFAULT '',
            tool_calls TEXT NOT NULL DEFAULT '[]',
            tool_call_id TEXT,
            status TEXT,
            partial INTEGER NOT NULL DEFAULT 0,
            created_at REAL NOT NULL,
            UNIQUE (conversation_id, seq)
        );

        CREATE TABLE tool_calls (
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            call_id TEXT NOT NULL,
            name TEXT NOT NULL,
            arguments TEXT NOT NULL,
            state TEXT NOT NULL,
            decision TEXT NOT NULL DEFAULT '',
            result_status TEXT,
            result TEXT,
            requested_at REAL NOT NULL,
            decided_at REAL,
            finished_at REAL,
            duration REAL,
            PRIMARY KEY (conversation_id, call_id)
        );

        CREATE TABLE plans (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            call_id TEXT,
            title TEXT NOT NULL,
            markdown TEXT NOT NULL,
            created_at REAL NOT NULL
        );
        CREATE INDEX plans_by_conversation ON plans (conversation_id, id);

        CREATE TABLE wire_log (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            leg INTEGER NOT NULL,
            direction TEXT NOT NULL,
            text TEXT NOT NULL,
            at REAL NOT NULL
        );
        CREATE INDEX wire_by_conversation ON wire_log (conversation_id, leg, id);

        CREATE TABLE notes (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            kind TEXT NOT NULL,
            text TEXT NOT NULL,
            at REAL NOT NULL
        );
        """,
    )


def _v2_search(conn: sqlite3.Connection) -> None:
    """Full-text search over message text when this SQLite has FTS5 (else LIKE is used)."""
    if not fts5_available(conn):
        return
    _run_script(
        conn,
        """
        CREATE VIRTUAL TABLE messages_fts USING fts5(
            content, content='messages', content_rowid='id', tokenize='unicode61'
        );
        INSERT INTO messages_fts (rowid, content) SELECT id, content FROM messages;
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages BEGIN
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END;
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
        END;
        CREATE TRIGGER messages_fts_update AFTER UPDATE OF content ON messages BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END;
        """,
    )


def _run_script(conn: sqlite3.Connection, script: str) -> None:
    """Run statements one by one: executescript would commit the migration's transaction."""
    statement = ""
    for line in script.splitlines(keepends=True):
        statement += line
        if sqlite3.complete_statement(statement):
            conn.execute(statement)
            statement = ""
    if statement.strip():
        conn.execute(statement)


def _v3_cheaper_streaming(conn: sqlite3.Connection) -> None:
    """Streaming costs: partial rows stay out of the search index (it is rebuilt when the
    answer is final), and the wire log is kept in chunks (one row per journal flush)."""
    if has_fts(conn):
        for name in ("insert", "delete", "update"):
            conn.execute(f"DROP TRIGGER IF EXISTS messages_fts_{name}")
        _run_script(
            conn,
            """
            CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
            WHEN new.partial = 0 BEGIN
                INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
            END;
            CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
            WHEN old.partial = 0 BEGIN
                INSERT INTO messages_fts (messages_fts, rowid, content)
                    VALUES ('delete', old.id, old.content);
            END;
            CREATE TRIGGER messages_fts_unindex AFTER UPDATE OF content, partial ON messages
            WHEN old.partial = 0 BEGIN
                INSERT INTO messages_fts (messages_fts, rowid, content)
                    VALUES ('delete', old.id, old.content);
            END;
            CREATE TRIGGER messages_fts_index AFTER UPDATE OF content, partial ON messages
            WHEN new.partial = 0 BEGIN
                INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
            END;
            INSERT INTO messages_fts (messages_fts) VALUES ('delete-all');
            INSERT INTO messages_fts (rowid, content)
                SELECT id, content FROM messages WHERE partial = 0;
            """,
        )
    _run_script(
        conn,
        """
        CREATE TABLE wire_chunks (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            leg INTEGER NOT NULL,
            entries TEXT NOT NULL
        );
        CREATE INDEX wire_chunks_by_conversation ON wire_chunks (conversation_id, id);
        """,
    )
    chunks: dict[tuple[str, int], list[list[object]]] = {}
    for cid, leg, direction, text, at in conn.execute(
        "SELECT conversation_id, leg, direction, text, at FROM wire_log ORDER BY id"
    ):
        chunks.setdefault((cid, leg), []).append([direction, text, at])
    conn.executemany(
        "INSERT INTO wire_chunks (conversation_id, leg, entries) VALUES (?, ?, ?)",
        ((cid, leg, json.dumps(entries)) for (cid, leg), entries in chunks.items()),
    )
    conn.execute("DROP TABLE wire_log")


def _v4_branches(conn: sqlite3.Connection) -> None:
    """Branches: the message list as it was before a rewind, compaction or edit."""
    _run_script(
        conn,
        """
        CREATE TABLE branches (
            id INTEGER PRIMARY KEY,
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            reason TEXT NOT NULL,
            note TEXT NOT NULL DEFAULT '',
            created_at REAL NOT NULL
        );
        CREATE INDEX branches_by_conversation ON branches (conversation_id, id);

        CREATE TABLE branch_messages (
            branch_id INTEGER NOT NULL REFERENCES branches(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            role TEXT NOT NULL,
            content TEXT NOT NULL DEFAULT '',
            tool_calls TEXT NOT NULL DEFAULT '[]',
            tool_call_id TEXT,
            status TEXT,
            created_at REAL NOT NULL,
            PRIMARY KEY (branch_id, seq)
        );
        """,
    )


def _v5_call_phases(conn: sqlite3.Connection) -> None:
    """Tool calls keep their phase in the one vocabulary of call_life.py."""
    conn.execute("UPDATE tool_calls SET state = 'waiting' WHERE state = 'awaiting_approval'")
    conn.execute(
        "UPDATE tool_calls SET state = COALESCE(result_status, 'interrupted') WHERE state = 'done'"
    )


def _v6_checkpoints(conn: sqlite3.Connection) -> None:
    """Checkpoints: the project's files before and after each call that can change them."""
    _run_script(
        conn,
        """
        CREATE TABLE checkpoints (
            id INTEGER PRIMARY KEY,
            folder TEXT NOT NULL,
            source TEXT NOT NULL,
            call_id TEXT NOT NULL DEFAULT '',
            tool TEXT NOT NULL,
            summary TEXT NOT NULL DEFAULT '',
            before_commit TEXT NOT NULL,
            after_commit TEXT,
            state TEXT NOT NULL,
            files TEXT NOT NULL DEFAULT '[]',
            skipped TEXT NOT NULL DEFAULT '[]',
            restores TEXT NOT NULL DEFAULT '[]',
            started_at REAL NOT NULL,
            finished_at REAL
        );
        CREATE INDEX checkpoints_by_folder ON checkpoints (folder, id);
        CREATE INDEX checkpoints_by_call ON checkpoints (call_id);
        """,
    )


def _v7_reasoning_and_parts(conn: sqlite3.Connection) -> None:
    """An assistant message's reasoning; a user message's attachments (parts) and the
    images they point to, stored once by content hash (blobs)."""
    _run_script(
        conn,
        """
        ALTER TABLE messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
        ALTER TABLE messages ADD COLUMN parts TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE branch_messages ADD COLUMN reasoning TEXT NOT NULL DEFAULT '';
        ALTER TABLE branch_messages ADD COLUMN parts TEXT NOT NULL DEFAULT '[]';

        CREATE TABLE blobs (
            sha256 TEXT PRIMARY KEY,
            mime TEXT NOT NULL,
            data BLOB NOT NULL,
            created_at REAL NOT NULL
        );
        """,
    )


def _v8_edits_and_pins(conn: sqlite3.Connection) -> None:
    """A call's arguments as it ran, when a hook changed the model's (trying rules on the
    history reports them); a conversation's pinned facts, kept word for word at every
    compaction."""
    _run_script(
        conn,
        """
        ALTER TABLE tool_calls ADD COLUMN ran_arguments TEXT;

        CREATE TABLE pins (
            conversation_id TEXT NOT NULL REFERENCES conversations(id) ON DELETE CASCADE,
            seq INTEGER NOT NULL,
            text TEXT NOT NULL,
            pinned_by TEXT NOT NULL,
            created_at REAL NOT NULL,
            PRIMARY KEY (conversation_id, seq)
        );
        """,
    )


def _v9_call_steps_and_plan_mode(conn: sqlite3.Connection) -> None:
    """A call's hook runs and the lines steps after it added (diagnostics), as JSON; a
    conversation's plan mode, so reopening it brings both back."""
    _run_script(
        conn,
        """
        ALTER TABLE tool_calls ADD COLUMN hooks TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE tool_calls ADD COLUMN notes TEXT NOT NULL DEFAULT '[]';
        ALTER TABLE conversations ADD COLUMN plan_mode INTEGER NOT NULL DEFAULT 0;
        """,
    )


def _v10_deferred_search_index(conn: sqlite3.Connection) -> None:
    """A final row may be written before it is indexed for search (`indexed = 0`): an
    answer's indexing then runs after the turn's end instead of inside its wait. The
    triggers index a row once it is final and indexed; a row a process left unindexed
    (it stopped in between) is indexed when the history is next opened."""
    _run_script(
        conn,
        """
        ALTER TABLE messages ADD COLUMN indexed INTEGER NOT NULL DEFAULT 1;
        CREATE INDEX messages_unindexed ON messages (id) WHERE indexed = 0;
        """,
    )
    if not has_fts(conn):
        return
    for name in ("insert", "delete", "unindex", "index"):
        conn.execute(f"DROP TRIGGER IF EXISTS messages_fts_{name}")
    _run_script(
        conn,
        """
        CREATE TRIGGER messages_fts_insert AFTER INSERT ON messages
        WHEN new.partial = 0 AND new.indexed = 1 BEGIN
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END;
        CREATE TRIGGER messages_fts_delete AFTER DELETE ON messages
        WHEN old.partial = 0 AND old.indexed = 1 BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
        END;
        CREATE TRIGGER messages_fts_unindex AFTER UPDATE OF content, partial, indexed
        ON messages WHEN old.partial = 0 AND old.indexed = 1 BEGIN
            INSERT INTO messages_fts (messages_fts, rowid, content)
                VALUES ('delete', old.id, old.content);
        END;
        CREATE TRIGGER messages_fts_index AFTER UPDATE OF content, partial, indexed
        ON messages WHEN new.partial = 0 AND new.indexed = 1 BEGIN
            INSERT INTO messages_fts (rowid, content) VALUES (new.id, new.content);
        END;
        """,
    )


MIGRATIONS: tuple[Migration, ...] = (
    _v1_tables,
    _v2_search,
    _v3_cheaper_streaming,
    _v4_branches,
    _v5_call_phases,
    _v6_checkpoints,
    _v7_reasoning_and_parts,
    _v8_edits_and_pins,
    _v9_call_steps_and_plan_mode,
    _v10_deferred_search_index,
)
SCHEMA_VERSION = len(MIGRATIONS)


def fts5_available(conn: sqlite3.Connection) -> bool:
    try:
        conn.execute("CREATE VIRTUAL TABLE temp.fts5_probe USING fts5(x)")
    except sqlite3.OperationalError:
        return False
    conn.execute("DROP TABLE temp.fts5_probe")
    return True


def has_fts(conn: sqlite3.Connection) -> bool:
    row = conn.execute(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'messages_fts'"
    ).fetchone()
    return row is not None


def schema_version(conn: sqlite3.Connection) -> int:
    return int(conn.execute("PRAGMA user_version").fetchone()[0])


def migrate(conn: sqlite3.Connection, migrations: tuple[Migration, ...] = MIGRATIONS) -> int:
    """Bring the schema up to date; returns the version reached.

    Raises NewerSchemaError for a database from a newer melgui.
    """
    version = schema_version(conn)
    if version > len(migrations):
        raise NewerSchemaError(
            f"the history database was written by a newer melgui (schema {version}; "
            f"this one knows up to {len(migrations)})"
        )
    for number in range(version + 1, len(migrations) + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            migrations[number - 1](conn)
            conn.execute(f"PRAGMA user_version = {number}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return len(migrations)
