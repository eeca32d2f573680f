"""SQLite store for sessions, tasks and messages (the kagent-controller side).

Everything the REST API and ``GetTask``/``ListTasks`` return lives here, as A2A 0.3 JSON
(``kind`` fields, camelCase), the shape kagent's controller stores.

Tables:

* ``sessions`` -- id, owner, name, timestamps, fork origin.
* ``tasks`` -- one row per task, oldest first by ``seq``. ``body`` is the task JSON *without*
  ``history``. ``kind`` is ``turn`` (one A2A request that ran the agent), ``rewind`` (the
  effective-history Task a rewind produced), ``redo`` (a rewind that undid one) or ``fork`` (the
  effective history a fork copied in). ``rewound_by`` marks a task undone by a rewind (never
  deleted).
* ``messages`` -- every stored message once, owned by the turn/fork task that produced it;
  ``body`` is the message as 0.3 JSON and ``body_v1`` the same message as A2A 1.0 JSON,
  rendered by a2a-sdk (``render_version`` names which; rows rendered by another a2a-sdk are
  re-rendered when the store opens), so a rewind's effective history is sent in either dialect
  without re-encoding thousands of messages. A turn task's history is its own messages; a
  rewind task's history is a list of message ``seq`` references (``history_refs``), so the
  effective history is never copied.
* ``intents`` -- the write-ahead journal of work that spans this store and ADK's session
  database (rewind, fork, delete): written and committed before ADK is touched, removed in the
  same transaction as the store's side of the work. See :mod:`rewindtui.server.storage.recovery`.

The schema is versioned with ``PRAGMA user_version`` (:data:`SCHEMA_VERSION`); :func:`migrate`
brings an older file up to date, and a newer one is refused.

Rewind, redo and fork read the session's task log (:mod:`rewindtui.server.service.session_log`): a
rewind (kind ``rewind``, or ``redo`` when it undid an earlier rewind) makes the session what it
was just before an invocation, as ADK does; ``rewound_by`` marks the tasks that are not current,
each with the rewind that last took it away (cleared when a redo brings it back). A rewind task's
``history_refs`` is the effective history at that moment.

Each database connection lives on its own worker thread (a one-thread executor owned by the
store, shut down and joined on close); writes are serialized by an asyncio lock and go through
one connection, reads through the other, so a reader never sees a write transaction half done.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import json
import logging
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any, TypeVar

from rewindtui.a2a import contract
from rewindtui.a2a.dialect import TERMINAL_STATES
from rewindtui.server.service.session_log import UNREAD, LogMessage, LogTask, Plan, SessionLog
from rewindtui.server.service.wire import RENDER_VERSION, dumps, message_v1_text, now_iso
from rewindtui.server.storage.start_failure import open_failure
from rewindtui.server.storage.undecodable import (
    checked_body,
    decode_text,
    placeholder_task_body,
    task_note,
    task_problem,
)

log = logging.getLogger(__name__)

T = TypeVar("T")

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


class InvalidPageToken(ValueError):
    pass


@dataclass(frozen=True)
class SessionRow:
    id: str
    user_id: str
    name: str
    agent_ref: str
    created_at: str
    updated_at: str
    forked_from: str | None = None
    forked_before_invocation_id: str | None = None
    #: read, not stored: the turn of ``forked_from`` the fork branched off at (1-based) ...
    forked_at_turn: int | None = None
    #: ... and how many branches of turns were rewound in this session
    rewound_branches: int = 0

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "user_id": self.user_id,
            "agent_ref": self.agent_ref,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
            contract.SESSION_BRANCHES_FIELD: self.rewound_branches,
        }
        if self.forked_from:
            data[contract.SESSION_FORKED_FROM_FIELD] = self.forked_from
            data["forked_before_invocation_id"] = self.forked_before_invocation_id
            data[contract.SESSION_FORK_TURN_FIELD] = self.forked_at_turn
        return data


@dataclass(frozen=True)
class TaskRow:
    seq: int
    id: str
    session_id: str
    user_id: str
    kind: str
    invocation_id: str | None
    state: str
    created_at: str
    updated_at: str
    rewound_by: str | None
    rewound_at: str | None
    history_refs: str | None
    body: str
    #: read, not stored: why the row could not be read as stored ("": it could); then ``body``
    #: is a placeholder and ``history_refs`` empty (:mod:`.undecodable`)
    unreadable: str = ""


def task_row(r: Sequence[Any]) -> TaskRow:
    """A TaskRow from a ``_TASK_COLS`` row; a damaged row as a placeholder (logged with its id)."""
    row = TaskRow(*r)
    reason = task_problem(row.body, row.history_refs)
    if reason is None:
        return row
    log.warning("stored task %s (row %s) cannot be read: %s; answered as a placeholder", row.id, row.seq, reason)
    body = placeholder_task_body(row.id, row.session_id, row.state, row.updated_at, reason)
    refs = None if row.history_refs is None else "[]"
    return replace(row, body=body, history_refs=refs, unreadable=reason)


@dataclass(frozen=True)
class Intent:
    """A journal entry: work on ``session_id`` that touches ADK and the store."""

    id: str
    kind: str  # rewind | fork | delete
    session_id: str
    payload: dict[str, Any]
    created_at: str


@dataclass(frozen=True)
class TaskPage:
    tasks: list[TaskRow]
    total: int
    next_token: str  # "" on the last page




_SESSION_COLS = "id, user_id, name, agent_ref, created_at, updated_at, forked_from, forked_before_invocation_id"
#: Read with a session (``FROM sessions AS s``): the turn of the original a fork branched off at
#: (the turns it copied, plus one), and the rewound branches (rewinds that took turns away and
#: were not undone: a rewound task's ``rewound_by`` is the rewind that last took it away).
_SESSION_EXTRAS = (
    "CASE WHEN s.forked_from IS NULL THEN NULL ELSE (SELECT COUNT(DISTINCT m.invocation_id) + 1 "
    "FROM tasks AS t JOIN messages AS m ON m.task_id = t.id WHERE t.session_id = s.id AND t.kind = 'fork') END, "
    "(SELECT COUNT(DISTINCT t.rewound_by) FROM tasks AS t WHERE t.session_id = s.id "
    "AND t.kind IN ('turn', 'fork') AND t.rewound_by IS NOT NULL)"
)
_TASK_COLS = (
    "seq, id, session_id, user_id, kind, invocation_id, state, created_at, updated_at, "
    "rewound_by, rewound_at, history_refs, body"
)
_INSERT_TASK = (
    "INSERT INTO tasks (id, session_id, user_id, kind, invocation_id, state, created_at, updated_at, "
    "history_refs, body) VALUES (?,?,?,?,?,?,?,?,?,?)"
)
_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, task_id, message_id, invocation_id, role, body, body_v1, render_version) "
    "VALUES (?,?,?,?,?,?,?,?)"
)
Statement = tuple[str, Sequence[Any]]


def message_row(
    session_id: str, task_id: str, message: dict[str, Any], v1_text: str | None = None
) -> tuple[Any, ...]:
    """A messages row; ``v1_text``: the message's 1.0 JSON when already known (else rendered)."""
    return (
        session_id,
        task_id,
        message["messageId"],
        (message.get("metadata") or {}).get("kagent_invocation_id"),
        message["role"],
        dumps(message),
        message_v1_text(message) if v1_text is None else v1_text,
        RENDER_VERSION,
    )


def _task_body(task: dict[str, Any]) -> str:
    return dumps({k: v for k, v in task.items() if k != "history"})


class _Connection:
    """One sqlite3 connection on its own worker thread (owned, so ``close`` can join it)."""

    def __init__(self, path: Path, busy_timeout_ms: int, name: str) -> None:
        self._executor = ThreadPoolExecutor(1, thread_name_prefix=f"rewindtui-store-{name}")
        self._path = path
        self._busy_timeout_ms = busy_timeout_ms
        self._conn: sqlite3.Connection | None = None

    async def run(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        conn = self._conn
        if conn is None:
            raise RuntimeError("store is not open")
        return await asyncio.get_running_loop().run_in_executor(self._executor, fn, conn)

    async def open(self) -> None:
        def connect() -> sqlite3.Connection:
            conn = sqlite3.connect(self._path, isolation_level=None, check_same_thread=False)
            conn.text_factory = decode_text  # a garbled row reads as BadText, not an error for the whole query
            conn.execute(f"PRAGMA busy_timeout={int(self._busy_timeout_ms)}")
            return conn

        self._conn = await asyncio.get_running_loop().run_in_executor(self._executor, connect)

    async def close(self) -> None:
        conn, self._conn = self._conn, None
        try:
            if conn is not None:
                await asyncio.get_running_loop().run_in_executor(self._executor, conn.close)
        finally:
            await asyncio.to_thread(self._executor.shutdown, True)


class Tx:
    """An open write transaction (``BEGIN IMMEDIATE``: no other writer until it ends)."""

    def __init__(self, conn: _Connection) -> None:
        self._conn = conn

    async def execute(self, statements: Iterable[Statement]) -> None:
        todo = list(statements)

        def run(conn: sqlite3.Connection) -> None:
            for sql, params in todo:
                conn.execute(sql, params)

        await self._conn.run(run)

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self._conn.run(lambda conn: conn.execute(sql, params).fetchall())


class Store:
    """Async SQLite store: one writer connection, one reader connection, each on its own thread."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 2000) -> None:
        self.path = Path(path)
        self._writer = _Connection(self.path, busy_timeout_ms, "w")
        self._reader = _Connection(self.path, busy_timeout_ms, "r")
        self._write_lock = asyncio.Lock()
        self._open = False

    # -- lifecycle ---------------------------------------------------------------
    async def open(self) -> None:
        """Open (and migrate) the file. A file that is not a database, damaged or unreadable
        raises StoreOpenFailed: one line naming the file and what to do."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        try:
            await self._writer.open()
            await self._writer.run(_prepare)
            await self._reader.open()
        except sqlite3.DatabaseError as exc:
            await self.close()
            raise open_failure(self.path, exc) from exc
        except BaseException:
            await self.close()
            raise
        self._open = True

    async def close(self) -> None:
        self._open = False
        for conn in (self._reader, self._writer):
            await conn.close()

    async def _fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self._reader.run(lambda conn: conn.execute(sql, params).fetchall())

    async def _fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        return await self._reader.run(lambda conn: conn.execute(sql, params).fetchone())

    @asynccontextmanager
    async def transaction(self) -> AsyncIterator[Tx]:
        """A write transaction; commits when the block ends, rolls back if it raises.

        Entering waits for this process's other writes, then for another process's lock (up to
        the busy timeout; then ``sqlite3.OperationalError: database is locked``).
        """
        async with self._write_lock:
            await self._writer.run(lambda conn: conn.execute("BEGIN IMMEDIATE"))
            try:
                yield Tx(self._writer)
                await self._writer.run(lambda conn: conn.execute("COMMIT"))
            except BaseException:
                await self._writer.run(_rollback)
                raise

    async def _write(self, statements: Iterable[Statement], tx: Tx | None = None) -> None:
        """``statements`` in ``tx``, or in a transaction of their own (one trip to the writer thread)."""
        if tx is not None:
            await tx.execute(statements)
            return
        todo = list(statements)

        def run(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                for sql, params in todo:
                    conn.execute(sql, params)
                conn.execute("COMMIT")
            except BaseException:
                _rollback(conn)
                raise

        async with self._write_lock:
            await self._writer.run(run)

    # -- sessions ----------------------------------------------------------------
    async def create_session(self, row: SessionRow) -> SessionRow:
        await self._write([_insert_session(row)])
        return row

    async def get_session(self, session_id: str) -> SessionRow | None:
        r = await self._fetchone(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,))
        return SessionRow(*r) if r else None

    async def list_sessions(self, user_id: str) -> list[SessionRow]:
        """The user's sessions, most recently updated first, each with its fork turn and its
        number of rewound branches (see :data:`_SESSION_EXTRAS`)."""
        rows = await self._fetchall(
            f"SELECT {_SESSION_COLS}, {_SESSION_EXTRAS} FROM sessions AS s WHERE user_id = ? "
            "ORDER BY updated_at DESC, created_at DESC",
            (user_id,),
        )
        return [SessionRow(*r) for r in rows]

    async def get_session_detail(self, session_id: str) -> SessionRow | None:
        """:meth:`get_session` with the fork turn and the number of rewound branches."""
        r = await self._fetchone(f"SELECT {_SESSION_COLS}, {_SESSION_EXTRAS} FROM sessions AS s WHERE id = ?", (session_id,))
        return SessionRow(*r) if r else None

    async def rename_session(self, session_id: str, name: str) -> None:
        await self._write([("UPDATE sessions SET name = ?, updated_at = ? WHERE id = ?", (name, now_iso(), session_id))])

    def delete_session_statements(self, session_id: str) -> list[Statement]:
        return [
            ("DELETE FROM messages WHERE session_id = ?", (session_id,)),
            ("DELETE FROM tasks WHERE session_id = ?", (session_id,)),
            ("DELETE FROM sessions WHERE id = ?", (session_id,)),
        ]

    # -- tasks and messages ------------------------------------------------------
    async def start_turn(
        self, *, task: dict[str, Any], session_id: str, user_id: str, user_message: dict[str, Any], name: str | None
    ) -> None:
        """Store a turn's task and its user message before the agent runs (one transaction)."""
        ts = now_iso()
        statements: list[Statement] = [
            (_INSERT_TASK, (task["id"], session_id, user_id, "turn", None, task["status"]["state"], ts, ts, None,
                            _task_body(task))),
            (_INSERT_MESSAGE, message_row(session_id, task["id"], user_message)),
        ]
        if name:
            statements.append(("UPDATE sessions SET name = ? WHERE id = ? AND name = ''", (name, session_id)))
        await self._write(statements)

    async def set_turn_invocation(
        self, *, task: dict[str, Any], user_message: dict[str, Any], invocation_id: str, tx: Tx | None = None
    ) -> None:
        """The turn's invocation is known: record it on the task and its user message."""
        await self._write(
            [
                (
                    "UPDATE tasks SET invocation_id = ?, state = ?, updated_at = ?, body = ? WHERE id = ?",
                    (invocation_id, task["status"]["state"], now_iso(), _task_body(task), task["id"]),
                ),
                (
                    "UPDATE messages SET invocation_id = ?, body = ?, body_v1 = ?, render_version = ? "
                    "WHERE task_id = ? AND message_id = ?",
                    (invocation_id, dumps(user_message), message_v1_text(user_message), RENDER_VERSION,
                     task["id"], user_message["messageId"]),
                ),
            ],
            tx,
        )

    async def update_task(self, task: dict[str, Any], *, touch_session: bool = False, tx: Tx | None = None) -> None:
        ts = now_iso()
        statements: list[Statement] = [
            (
                "UPDATE tasks SET state = ?, updated_at = ?, body = ? WHERE id = ?",
                (task["status"]["state"], ts, _task_body(task), task["id"]),
            )
        ]
        if touch_session:
            statements.append(("UPDATE sessions SET updated_at = ? WHERE id = ?", (ts, task["contextId"])))
        await self._write(statements, tx)

    async def add_messages(
        self, *, session_id: str, task_id: str, messages: Sequence[dict[str, Any]], tx: Tx | None = None
    ) -> None:
        await self._write([(_INSERT_MESSAGE, message_row(session_id, task_id, m)) for m in messages], tx)

    async def message_id_exists(self, session_id: str, message_id: str) -> bool:
        row = await self._fetchone(
            "SELECT 1 FROM messages WHERE session_id = ? AND message_id = ? LIMIT 1", (session_id, message_id)
        )
        return row is not None

    async def get_task(self, task_id: str) -> TaskRow | None:
        r = await self._fetchone(f"SELECT {_TASK_COLS} FROM tasks WHERE id = ?", (task_id,))
        return task_row(r) if r else None

    async def session_tasks(self, session_id: str, include_rewound: bool = False) -> list[TaskRow]:
        where = "" if include_rewound else " AND rewound_by IS NULL"
        rows = await self._fetchall(
            f"SELECT {_TASK_COLS} FROM tasks WHERE session_id = ?{where} ORDER BY seq", (session_id,)
        )
        return [task_row(r) for r in rows]

    async def session_tasks_page(
        self, session_id: str, *, limit: int, before: str = "", include_rewound: bool = False
    ) -> TaskPage:
        """The newest ``limit`` tasks of the session older than the cursor ``before`` (a previous
        page's ``next_token``), oldest first; one index range read, whatever the session's size.
        ``total`` is not counted (-1)."""
        where = "session_id = ?" + ("" if include_rewound else " AND rewound_by IS NULL")
        params: list[Any] = [session_id]
        if before:
            where += " AND seq < ?"
            params.append(_decode_cursor(before)[1])
        rows = await self._fetchall(
            f"SELECT {_TASK_COLS} FROM tasks WHERE {where} ORDER BY seq DESC LIMIT ?", [*params, limit + 1]
        )
        tasks = [task_row(r) for r in reversed(rows[:limit])]
        next_token = _encode_cursor("", tasks[0].seq) if len(rows) > limit else ""
        return TaskPage(tasks=tasks, total=-1, next_token=next_token)

    async def unfinished_tasks(self) -> list[TaskRow]:
        """Turns that were running (a task waiting for the user's answer is not running)."""
        done = (*TERMINAL_STATES, "input-required", "auth-required")
        marks = ",".join("?" for _ in done)
        rows = await self._fetchall(f"SELECT {_TASK_COLS} FROM tasks WHERE state NOT IN ({marks}) ORDER BY seq", done)
        return [task_row(r) for r in rows]

    async def list_tasks(
        self,
        user_id: str,
        *,
        context_id: str | None = None,
        state: str | None = None,
        updated_after: str | None = None,
        page_size: int = 50,
        page_token: str = "",
    ) -> TaskPage:
        """The user's current (not rewound) tasks, most recently updated first, one page at a time.

        ``page_token`` is the ``next_token`` of the previous page (an opaque cursor: the last
        task's update time and ``seq``); a token that is not one raises :class:`InvalidPageToken`.
        """
        where = ["user_id = ?", "rewound_by IS NULL"]
        params: list[Any] = [user_id]
        if context_id is not None:
            where.append("session_id = ?")
            params.append(context_id)
        if state is not None:
            where.append("state = ?")
            params.append(state)
        if updated_after is not None:
            where.append("updated_at >= ?")
            params.append(updated_after)
        filters = " AND ".join(where)
        count = await self._fetchone(f"SELECT COUNT(*) FROM tasks WHERE {filters}", params)
        page_where = filters
        page_params = list(params)
        if page_token:
            updated_at, seq = _decode_cursor(page_token)
            page_where += " AND (updated_at < ? OR (updated_at = ? AND seq < ?))"
            page_params += [updated_at, updated_at, seq]
        rows = await self._fetchall(
            f"SELECT {_TASK_COLS} FROM tasks WHERE {page_where} ORDER BY updated_at DESC, seq DESC LIMIT ?",
            [*page_params, page_size + 1],
        )
        tasks = [task_row(r) for r in rows[:page_size]]
        next_token = _encode_cursor(tasks[-1].updated_at, tasks[-1].seq) if len(rows) > page_size else ""
        return TaskPage(tasks=tasks, total=count[0] if count else 0, next_token=next_token)

    async def task_history_bodies(self, task: TaskRow, *, v1: bool = False) -> list[str]:
        """Raw JSON bodies of a task's history, oldest first."""
        if task.history_refs is not None:
            return await self.message_bodies(json.loads(task.history_refs), v1=v1)
        column = "body_v1" if v1 else "body"
        rows = await self._fetchall(f"SELECT seq, {column} FROM messages WHERE task_id = ? ORDER BY seq", (task.id,))
        return [checked_body(r[1], r[0], v1=v1) for r in rows]

    async def tasks_history_bodies(self, tasks: Sequence[TaskRow], *, v1: bool = False) -> dict[str, list[str]]:
        """History bodies (0.3 JSON, or 1.0 with ``v1``) of many tasks, in two reads: the messages
        the turn/fork tasks own, and the messages the rewind tasks refer to (each read once, by
        index -- a page of a long session reads only what the page holds)."""
        column = "body_v1" if v1 else "body"
        owners = [t.id for t in tasks if t.history_refs is None]
        refs = {t.id: json.loads(t.history_refs) for t in tasks if t.history_refs is not None}

        def read(conn: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
            owned = conn.execute(
                f"SELECT m.task_id, m.{column}, m.seq FROM json_each(?) AS j CROSS JOIN messages AS m "
                "ON m.task_id = j.value ORDER BY j.key, m.seq",
                (dumps(owners),),
            ).fetchall() if owners else []
            wanted = sorted({s for seqs in refs.values() for s in seqs})
            referred = conn.execute(
                f"SELECT m.seq, m.{column} FROM json_each(?) AS j CROSS JOIN messages AS m ON m.seq = j.value",
                (dumps(wanted),),
            ).fetchall() if wanted else []
            return owned, referred

        owned, referred = await self._reader.run(read)
        result: dict[str, list[str]] = {t.id: [] for t in tasks}
        for task_id, body, seq in owned:
            result[task_id].append(checked_body(body, seq, v1=v1))
        by_seq = {seq: checked_body(body, seq, v1=v1) for seq, body in referred}
        for task_id, seqs in refs.items():
            result[task_id] = [by_seq[s] for s in seqs if s in by_seq]
        return result

    async def message_bodies(self, seqs: Sequence[int], *, v1: bool = False) -> list[str]:
        """Raw JSON of the messages ``seqs``, in that order (0.3 JSON, or 1.0 JSON with ``v1``)."""
        if not seqs:
            return []
        column = "body_v1" if v1 else "body"
        rows = await self._fetchall(
            f"SELECT m.seq, m.{column} FROM json_each(?) AS j JOIN messages AS m ON m.seq = j.value ORDER BY j.key",
            (dumps(list(seqs)),),
        )
        return [checked_body(r[1], r[0], v1=v1) for r in rows]

    async def session_log(self, session_id: str, tx: Tx | None = None, *, lazy: bool = False) -> SessionLog:
        """The session's task log: every task (rewound ones too) and every message's owner.

        Index range reads in one trip to the database thread, from the log's covering indexes
        (``tasks_log``, ``messages_log``: the rows, with their bodies, are not read); only rewind
        tasks' rows are (for the invocation they went back before, and their stored history).
        ``lazy``: those histories are left unread (``session_log.UNREAD``; :meth:`_read_refs`
        reads the ones needed) -- each holds a whole effective history."""
        tasks_sql = "SELECT seq, id, kind, invocation_id, rewound_by, created_at FROM tasks WHERE session_id = ? ORDER BY seq"
        refs = f"CASE WHEN history_refs IS NULL THEN NULL ELSE '{UNREAD}' END" if lazy else "history_refs"
        rewinds_sql = (
            f"SELECT seq, CASE WHEN json_valid(body) THEN json_extract(body, ?) END, {refs} FROM tasks WHERE session_id = ? AND kind IN ('rewind', 'redo')"
        )
        rewinds_params = (f"$.metadata.{contract.REWOUND_BEFORE_KEY}", session_id)
        messages_sql = "SELECT seq, task_id, invocation_id FROM messages WHERE session_id = ? ORDER BY seq"

        def read(conn: sqlite3.Connection) -> tuple[list[Any], list[Any], list[Any]]:
            return (
                conn.execute(tasks_sql, (session_id,)).fetchall(),
                conn.execute(rewinds_sql, rewinds_params).fetchall(),
                conn.execute(messages_sql, (session_id,)).fetchall(),
            )

        if tx is not None:
            tasks, rewinds, messages = (
                await tx.fetchall(tasks_sql, (session_id,)),
                await tx.fetchall(rewinds_sql, rewinds_params),
                await tx.fetchall(messages_sql, (session_id,)),
            )
        else:
            tasks, rewinds, messages = await self._reader.run(read)
        went_back = {seq: (before, refs_json) for seq, before, refs_json in rewinds}
        none = (None, None)
        task_seq = {r[1]: r[0] for r in tasks}
        return SessionLog(
            [LogTask(seq, tid, kind, inv, went_back.get(seq, none)[0], rewound, went_back.get(seq, none)[1], created)
             for seq, tid, kind, inv, rewound, created in tasks],
            (LogMessage(seq, task_seq[task_id], task_id, inv) for seq, task_id, inv in messages if task_id in task_seq),
        )

    async def _read_refs(self, log: SessionLog, invocation_id: str | None = None, tx: Tx | None = None) -> SessionLog:
        """``log`` with the stored histories its current conversation (and a plan of
        ``invocation_id``) reads."""
        sql = "SELECT t.seq, t.history_refs FROM json_each(?) AS j JOIN tasks AS t ON t.seq = j.value"
        while needed := log.refs_needed(invocation_id):  # again if one turns out to hold none
            rows = await (tx.fetchall(sql, (dumps(needed),)) if tx is not None else self._fetchall(sql, (dumps(needed),)))
            log.give_refs({seq: refs for seq, refs in rows})
        return log

    async def session_invocations(self, session_id: str) -> list[str]:
        """The invocation ids of the session's effective history, in order (each once)."""
        log = await self._read_refs(await self.session_log(session_id, lazy=True))
        return log.current_invocations()

    async def message_ids(self, session_id: str) -> set[str]:
        rows = await self._fetchall("SELECT message_id FROM messages WHERE session_id = ?", (session_id,))
        return {r[0] for r in rows}

    # -- rewind / fork -----------------------------------------------------------
    async def plan_rewind(
        self, session_id: str, invocation_id: str, tx: Tx | None = None, *, current_only: bool = True
    ) -> Plan:
        """Going back to just before ``invocation_id``: the effective history then, and the tasks
        whose rewound mark changes.

        With ``current_only`` (a rewind) the invocation must be in the session's effective history;
        otherwise (redo, fork) it may be any invocation of the session, a rewound one or a rewind's
        own. Raises :class:`~.session_log.NotInLog` when it is not one (unknown, or rewound).
        """
        log = await self._read_refs(await self.session_log(session_id, tx, lazy=True), invocation_id, tx)
        return log.plan(invocation_id, current_only=current_only)

    @staticmethod
    def rewind_statements(
        *, session_id: str, rewind_task: dict[str, Any], plan: Plan, user_id: str, invocation_id: str | None
    ) -> list[Statement]:
        """Store the rewind (or redo) task; mark the tasks it takes away rewound by it, and clear the
        mark of those it brings back."""
        ts = now_iso()
        refs = dumps([m.seq for m in plan.effective])
        kind = "redo" if (rewind_task.get("metadata") or {}).get(contract.REDO_OF_KEY) else "rewind"
        statements: list[Statement] = []
        if plan.hide:
            statements.append(
                (
                    "UPDATE tasks SET rewound_by = ?, rewound_at = ? WHERE seq IN (SELECT value FROM json_each(?))",
                    (rewind_task["id"], ts, dumps(plan.hide)),
                )
            )
        if plan.restore:
            statements.append(
                (
                    "UPDATE tasks SET rewound_by = NULL, rewound_at = NULL WHERE seq IN (SELECT value FROM json_each(?))",
                    (dumps(plan.restore),),
                )
            )
        return [
            *statements,
            (
                _INSERT_TASK,
                (rewind_task["id"], session_id, user_id, kind, invocation_id, rewind_task["status"]["state"],
                 ts, ts, refs, _task_body(rewind_task)),
            ),
            ("UPDATE sessions SET updated_at = ? WHERE id = ?", (ts, session_id)),
        ]

    async def message_pairs(self, seqs: Sequence[int]) -> list[tuple[str, str | None]]:
        """(0.3 JSON, 1.0 JSON or None when another a2a-sdk rendered it) of the messages ``seqs``."""
        if not seqs:
            return []
        rows = await self._fetchall(
            "SELECT m.body, m.body_v1, m.render_version FROM json_each(?) AS j JOIN messages AS m ON m.seq = j.value "
            "ORDER BY j.key",
            (dumps(list(seqs)),),
        )
        return [(body, v1 if version == RENDER_VERSION else None) for body, v1, version in rows]

    @staticmethod
    def fork_statements(
        *,
        session: SessionRow,
        fork_task: dict[str, Any],
        messages: Sequence[dict[str, Any]],
        v1_texts: Sequence[str | None] | None = None,
    ) -> list[Statement]:
        """A forked session holding one task (kind ``fork``) with ``messages`` (and their 1.0 JSON,
        None where it must be rendered)."""
        ts = now_iso()
        statements: list[Statement] = [
            _insert_session(session),
            (_INSERT_TASK, (fork_task["id"], session.id, session.user_id, "fork", None, "completed", ts, ts, None,
                            _task_body(fork_task))),
        ]
        texts = v1_texts if v1_texts is not None else [None] * len(messages)
        statements += [
            (_INSERT_MESSAGE, message_row(session.id, fork_task["id"], m, v1)) for m, v1 in zip(messages, texts, strict=True)
        ]
        return statements

    # -- the intent journal ------------------------------------------------------
    async def add_intent(self, intent: Intent) -> None:
        await self._write(
            [
                (
                    "INSERT INTO intents (id, kind, session_id, payload, created_at) VALUES (?,?,?,?,?)",
                    (intent.id, intent.kind, intent.session_id, dumps(intent.payload), intent.created_at),
                )
            ]
        )

    @staticmethod
    def intent_done_statement(intent_id: str) -> Statement:
        return ("DELETE FROM intents WHERE id = ?", (intent_id,))

    async def drop_intent(self, intent_id: str, tx: Tx | None = None) -> None:
        await self._write([self.intent_done_statement(intent_id)], tx)

    async def intents(self, session_id: str | None = None) -> list[Intent]:
        where, params = ("WHERE session_id = ?", (session_id,)) if session_id is not None else ("", ())
        rows = await self._fetchall(
            f"SELECT id, kind, session_id, payload, created_at FROM intents {where} ORDER BY created_at", params
        )
        return [Intent(r[0], r[1], r[2], json.loads(r[3]), r[4]) for r in rows]

    async def counts(self, session_id: str) -> tuple[int, int]:
        """(tasks, messages) rows of a session, rewound ones included -- for tests and audits."""
        t = await self._fetchone("SELECT COUNT(*) FROM tasks WHERE session_id = ?", (session_id,))
        m = await self._fetchone("SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,))
        return (t[0] if t else 0, m[0] if m else 0)


def _insert_session(row: SessionRow) -> Statement:
    return (
        f"INSERT INTO sessions ({_SESSION_COLS}) VALUES (?,?,?,?,?,?,?,?)",
        (row.id, row.user_id, row.name, row.agent_ref, row.created_at, row.updated_at, row.forked_from,
         row.forked_before_invocation_id),
    )


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")


def _encode_cursor(updated_at: str, seq: int) -> str:
    raw = dumps({"u": updated_at, "s": seq}).encode()
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_cursor(token: str) -> tuple[str, int]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        updated_at, seq = data["u"], data["s"]
    except (binascii.Error, ValueError, TypeError, KeyError):
        raise InvalidPageToken(f"invalid pageToken {token[:40]!r}: use the nextPageToken of a ListTasks answer") from None
    if not isinstance(updated_at, str) or isinstance(seq, bool) or not isinstance(seq, int):
        raise InvalidPageToken(f"invalid pageToken {token[:40]!r}: use the nextPageToken of a ListTasks answer")
    return updated_at, seq


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
            "SELECT seq, body FROM messages WHERE render_version IS NOT ? LIMIT ?", (RENDER_VERSION, batch)
        ).fetchall()
        if not rows:
            return done
        conn.execute("BEGIN IMMEDIATE")
        try:
            conn.executemany(
                "UPDATE messages SET body_v1 = ?, render_version = ? WHERE seq = ?",
                [(message_v1_text(json.loads(body)), RENDER_VERSION, seq) for seq, body in rows],
            )
        except BaseException:
            conn.execute("ROLLBACK")
            raise
        conn.execute("COMMIT")
        done += len(rows)


def _db_name(conn: sqlite3.Connection) -> str:
    row = conn.execute("PRAGMA database_list").fetchone()
    return str(row[2]) if row and row[2] else "the store"


def task_json(task: TaskRow, history_bodies: Sequence[str], *, mark_rewound: bool = True) -> str:
    """The task as 0.3 JSON text (history spliced in from raw message bodies)."""
    body = task.body
    if mark_rewound and task.rewound_by is not None:
        data = json.loads(body)
        meta = dict(data.get("metadata") or {})
        meta[contract.REWOUND_KEY] = True
        meta[contract.REWOUND_BY_TASK_KEY] = task.rewound_by
        meta[contract.REWOUND_AT_KEY] = task.rewound_at
        data["metadata"] = meta
        body = dumps(data)
    if task.unreadable:
        history_bodies = [*history_bodies, task_note(task.id, task.seq, task.unreadable)]
    return body[:-1] + ',"history":[' + ",".join(history_bodies) + "]}"
