"""The sessions this client created or used, remembered per server and user (SQLite).

An A2A server without a REST API cannot list its sessions (contexts), and an A2A 0.3 server
cannot list a context's tasks either. So the client remembers, in ``sessions.db`` under the user
data dir, each session it sent a turn in (its id, a title, when it was last used, where it was
forked from) and the ids of that session's tasks: enough to list the sessions and, on a 0.3
server, to fetch the conversation back task by task (``tasks/get``).

An entry the server no longer knows is marked ``gone``, never dropped silently.

Standard-library ``sqlite3``; each call opens and closes its own connection (the file is small and
written once per turn), so it is safe from any thread and from several processes at once.
"""

from __future__ import annotations

import sqlite3
import time
from collections.abc import Iterator
from contextlib import closing, contextmanager
from dataclasses import dataclass
from pathlib import Path

SCHEMA_VERSION = 1
_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    server TEXT NOT NULL,
    user TEXT NOT NULL,
    id TEXT NOT NULL,
    title TEXT NOT NULL DEFAULT '',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    forked_from TEXT,
    gone INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (server, user, id)
);
CREATE TABLE IF NOT EXISTS tasks (
    server TEXT NOT NULL,
    user TEXT NOT NULL,
    session_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    seq INTEGER NOT NULL,
    PRIMARY KEY (server, user, session_id, task_id)
);
"""


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


@dataclass(frozen=True)
class Remembered:
    id: str
    title: str
    created_at: str
    updated_at: str
    forked_from: str | None
    gone: bool


class LocalSessions:
    """``LocalSessions(path, server, user)``: one user's sessions on one server."""

    def __init__(self, path: Path, server: str, user: str | None) -> None:
        self.path = Path(path)
        self.server = server.rstrip("/")
        self.user = user or ""
        self._ready = False

    @contextmanager
    def _db(self) -> Iterator[sqlite3.Connection]:
        if not self._ready:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        with closing(sqlite3.connect(self.path, timeout=5.0)) as db:
            if not self._ready:
                version = db.execute("PRAGMA user_version").fetchone()[0]
                if version > SCHEMA_VERSION:
                    raise sqlite3.DatabaseError(f"{self.path} was written by a newer rewindtui (schema {version})")
                db.executescript(_SCHEMA)
                db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
                self._ready = True
            with db:  # one transaction
                yield db

    def remember(self, session_id: str, *, title: str = "", forked_from: str | None = None) -> None:
        """Record that the session was used now (created if new; ``gone`` cleared)."""
        now = _now()
        with self._db() as db:
            db.execute(
                "INSERT INTO sessions (server, user, id, title, created_at, updated_at, forked_from) "
                "VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT (server, user, id) DO UPDATE SET "
                "updated_at = excluded.updated_at, gone = 0, "
                "title = CASE WHEN sessions.title = '' THEN excluded.title ELSE sessions.title END",
                (self.server, self.user, session_id, title, now, now, forked_from),
            )

    def add_task(self, session_id: str, task_id: str) -> None:
        with self._db() as db:
            db.execute(
                "INSERT OR IGNORE INTO tasks (server, user, session_id, task_id, seq) VALUES (?, ?, ?, ?, "
                "(SELECT COALESCE(MAX(seq), 0) + 1 FROM tasks WHERE server = ? AND user = ? AND session_id = ?))",
                (self.server, self.user, session_id, task_id, self.server, self.user, session_id),
            )

    def task_ids(self, session_id: str) -> list[str]:
        """The session's task ids in the order they were first seen."""
        with self._db() as db:
            rows = db.execute(
                "SELECT task_id FROM tasks WHERE server = ? AND user = ? AND session_id = ? ORDER BY seq",
                (self.server, self.user, session_id),
            ).fetchall()
        return [r[0] for r in rows]

    def sessions(self) -> list[Remembered]:
        """Every remembered session, most recently used first."""
        with self._db() as db:
            rows = db.execute(
                "SELECT id, title, created_at, updated_at, forked_from, gone FROM sessions "
                "WHERE server = ? AND user = ? ORDER BY updated_at DESC, created_at DESC, rowid DESC",
                (self.server, self.user),
            ).fetchall()
        return [Remembered(r[0], r[1], r[2], r[3], r[4], bool(r[5])) for r in rows]

    def get(self, session_id: str) -> Remembered | None:
        return next((s for s in self.sessions() if s.id == session_id), None)

    def mark_gone(self, session_id: str, gone: bool = True) -> None:
        with self._db() as db:
            db.execute(
                "UPDATE sessions SET gone = ? WHERE server = ? AND user = ? AND id = ?",
                (int(gone), self.server, self.user, session_id),
            )

    def forget(self, session_id: str) -> None:
        """Drop a session the user deleted."""
        with self._db() as db:
            args = (self.server, self.user, session_id)
            db.execute("DELETE FROM sessions WHERE server = ? AND user = ? AND id = ?", args)
            db.execute("DELETE FROM tasks WHERE server = ? AND user = ? AND session_id = ?", args)
