"""The store's schema (``PRAGMA user_version``), its migrations, and the re-rendering of messages
another a2a-sdk rendered: what :meth:`Store.open <rewindtui.server.storage.store.Store.open>` runs
on the file before anything else."""

from __future__ import annotations

import json
import sqlite3
from typing import Any

from rewindtui.server.shared.wire import RENDER_VERSION, message_v1_text
from rewindtui.server.storage.undecodable import message_problem

#: The schema this code writes. 1: sessions, tasks, messages. 2: ``messages.render_version``,
#: the ``intents`` journal, an index for ``ListTasks``. 3: covering indexes for the session log
#: (a rewind reads it from them alone, not from the rows with their bodies).
SCHEMA_VERSION = 3

_SCHEMA_V1 = """
CREATE TABLE IF NOT EXISTS sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    agent_ref TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    forked_from TEXT,
    forked_before_invocation_id TEXT
);
CREATE INDEX IF NOT EXISTS sessions_by_user ON sessions(user_id, updated_at);
CREATE TABLE IF NOT EXISTS tasks (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    session_id TEXT NOT NULL,
    user_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    invocation_id TEXT,
    state TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    rewound_by TEXT,
    rewound_at TEXT,
    history_refs TEXT,
    body TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS tasks_by_session ON tasks(session_id, seq);
CREATE TABLE IF NOT EXISTS messages (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    session_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    invocation_id TEXT,
    role TEXT NOT NULL,
    body TEXT NOT NULL,
    body_v1 TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS messages_by_session ON messages(session_id, seq);
CREATE INDEX IF NOT EXISTS messages_by_task ON messages(task_id, seq);
CREATE UNIQUE INDEX IF NOT EXISTS messages_unique_id ON messages(session_id, message_id);
"""

#: schema version -> the statements that bring the previous version to it
MIGRATIONS: dict[int, str] = {
    1: _SCHEMA_V1,
    2: """
ALTER TABLE messages ADD COLUMN render_version TEXT;
CREATE TABLE intents (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    session_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX tasks_by_user_update ON tasks(user_id, updated_at, seq);
""",
    3: """
CREATE INDEX tasks_log ON tasks(session_id, seq, id, kind, invocation_id, rewound_by, created_at);
CREATE INDEX messages_log ON messages(session_id, seq, task_id, invocation_id);
""",
}


class SchemaTooNew(RuntimeError):
    """The file was written by a newer rewindtui."""


# -- schema ------------------------------------------------------------------------
def _prepare(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    migrate(conn)
    rerender(conn)


def migrate(conn: sqlite3.Connection) -> int:
    """Bring the file to :data:`SCHEMA_VERSION` (each step one transaction); returns the old version."""
    version = conn.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise SchemaTooNew(
            f"{_db_name(conn)} was written by a newer rewindtui (schema {version}, this one knows "
            f"{SCHEMA_VERSION}); upgrade rewindtui or use another --data-dir"
        )
    for target in range(version + 1, SCHEMA_VERSION + 1):
        conn.execute("BEGIN IMMEDIATE")
        try:
            for statement in MIGRATIONS[target].split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version={target}")
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
    return int(version)


def rerender(conn: sqlite3.Connection, batch: int = 500) -> int:
    """Re-render ``body_v1`` of rows another a2a-sdk rendered (or none recorded); returns how many."""
    done = 0
    while True:
        rows = conn.execute(
            "SELECT seq, body, body_v1 FROM messages WHERE render_version IS NOT ? LIMIT ?", (RENDER_VERSION, batch)
        ).fetchall()
        if not rows:
            return done
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "UPDATE messages SET body_v1 = ?, render_version = ? WHERE seq = ?",
                [(_v1_or_as_is(body, body_v1), RENDER_VERSION, seq) for seq, body, body_v1 in rows],
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        done += len(rows)


def _v1_or_as_is(body: Any, body_v1: Any) -> Any:
    """The 1.0 JSON of a stored 0.3 body; a body that is not a readable message keeps its old
    ``body_v1`` (each is answered as a placeholder when read, :mod:`.undecodable`)."""
    if message_problem(body, v1=False) is not None:
        return body_v1
    return message_v1_text(json.loads(body))


def _db_name(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row and row[2] else "the store"
