"""SQLite store for sessions, tasks and messages (the kagent-controller side).

Everything the REST API and ``tasks/get`` return lives here, as A2A 0.3 JSON
(``kind`` fields, camelCase), the shape kagent's controller stores.

Tables:

* ``sessions`` -- id, owner, name, timestamps, fork origin.
* ``tasks`` -- one row per task, oldest first by ``seq``. ``body`` is the task
  JSON *without* ``history``. ``kind`` is ``turn`` (one A2A request that ran
  the agent), ``rewind`` (the effective-history Task a rewind produced) or
  ``fork`` (the effective history a fork copied in). ``rewound_by`` marks a
  task undone by a rewind (never deleted).
* ``messages`` -- every stored message once, owned by the turn/fork task that
  produced it; ``body`` is the message as 0.3 JSON and ``body_v1`` the same
  message as A2A 1.0 JSON (so a rewind's effective history is sent in either
  dialect without re-encoding thousands of messages). A turn task's history is its own
  messages; a rewind task's history is a list of message ``seq`` references
  (``history_refs``), so the effective history is never copied.

Invariant used by rewind: the effective (non-rewound) history of a session is
exactly the messages owned by its non-rewound tasks, in ``seq`` order. (A
rewind marks the boundary task and everything after it, so a visible rewind
task only ever refers to messages of visible tasks before it.)
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiosqlite

from rewindtui.a2a.dialect import TERMINAL_STATES
from rewindtui.server.wire import dumps, message_v1_json, now_iso

SCHEMA = """
PRAGMA journal_mode=WAL;
PRAGMA synchronous=NORMAL;
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

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "id": self.id,
            "name": self.name,
            "user_id": self.user_id,
            "agent_ref": self.agent_ref,
            "created_at": self.created_at,
            "updated_at": self.updated_at,
        }
        if self.forked_from:
            data["forked_from"] = self.forked_from
            data["forked_before_invocation_id"] = self.forked_before_invocation_id
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


@dataclass(frozen=True)
class HistoryEntry:
    seq: int
    task_id: str
    invocation_id: str | None


@dataclass(frozen=True)
class RewindPlan:
    """What rewinding a session before an invocation means for the store."""

    effective: list[HistoryEntry]  # messages before the boundary, oldest first
    boundary_task_seq: int  # the task holding the first message of the invocation


class InvocationLookupError(LookupError):
    """The invocation is not a rewind target of the session (see ``reason``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason


_SESSION_COLS = "id, user_id, name, agent_ref, created_at, updated_at, forked_from, forked_before_invocation_id"
_TASK_COLS = (
    "seq, id, session_id, user_id, kind, invocation_id, state, created_at, updated_at, "
    "rewound_by, rewound_at, history_refs, body"
)


class Store:
    """Async SQLite store. One connection; writes are serialized by a lock."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self._db: aiosqlite.Connection | None = None
        self._write_lock = asyncio.Lock()

    # -- lifecycle ---------------------------------------------------------------
    async def open(self) -> None:
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._db = await aiosqlite.connect(self.path, isolation_level=None)
        await self._db.executescript(SCHEMA)

    async def close(self) -> None:
        if self._db is not None:
            db, self._db = self._db, None
            await db.close()
            # aiosqlite's worker thread ends just after close() returns; wait for it so a
            # stopped server leaves no thread behind.
            worker = getattr(db, "_thread", None)
            if worker is not None and worker is not threading.current_thread():
                worker.join(5)

    @property
    def db(self) -> aiosqlite.Connection:
        if self._db is None:
            raise RuntimeError("store is not open")
        return self._db

    async def _fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        async with self.db.execute(sql, params) as cur:
            return [tuple(row) for row in await cur.fetchall()]

    async def _fetchone(self, sql: str, params: Sequence[Any] = ()) -> tuple[Any, ...] | None:
        async with self.db.execute(sql, params) as cur:
            row = await cur.fetchone()
            return tuple(row) if row is not None else None

    async def _transaction(self, statements: Iterable[tuple[str, Sequence[Any]]]) -> None:
        async with self._write_lock:
            await self.db.execute("BEGIN IMMEDIATE")
            try:
                for sql, params in statements:
                    await self.db.execute(sql, params)
            except BaseException:
                await self.db.execute("ROLLBACK")
                raise
            await self.db.execute("COMMIT")

    # -- sessions ----------------------------------------------------------------
    async def create_session(self, row: SessionRow) -> SessionRow:
        async with self._write_lock:
            await self.db.execute(
                f"INSERT INTO sessions ({_SESSION_COLS}) VALUES (?,?,?,?,?,?,?,?)",
                (
                    row.id,
                    row.user_id,
                    row.name,
                    row.agent_ref,
                    row.created_at,
                    row.updated_at,
                    row.forked_from,
                    row.forked_before_invocation_id,
                ),
            )
        return row

    async def get_session(self, session_id: str) -> SessionRow | None:
        r = await self._fetchone(f"SELECT {_SESSION_COLS} FROM sessions WHERE id = ?", (session_id,))
        return SessionRow(*r) if r else None

    async def list_sessions(self, user_id: str) -> list[SessionRow]:
        rows = await self._fetchall(
            f"SELECT {_SESSION_COLS} FROM sessions WHERE user_id = ? ORDER BY updated_at DESC, created_at DESC",
            (user_id,),
        )
        return [SessionRow(*r) for r in rows]

    async def rename_session(self, session_id: str, name: str) -> None:
        async with self._write_lock:
            await self.db.execute("UPDATE sessions SET name = ? WHERE id = ?", (name, session_id))

    async def touch_session(self, session_id: str, when: str | None = None) -> None:
        async with self._write_lock:
            await self.db.execute(
                "UPDATE sessions SET updated_at = ? WHERE id = ?", (when or now_iso(), session_id)
            )

    async def delete_session(self, session_id: str) -> None:
        await self._transaction(
            [
                ("DELETE FROM messages WHERE session_id = ?", (session_id,)),
                ("DELETE FROM tasks WHERE session_id = ?", (session_id,)),
                ("DELETE FROM sessions WHERE id = ?", (session_id,)),
            ]
        )

    # -- tasks and messages ------------------------------------------------------
    async def insert_task(
        self,
        *,
        task: dict[str, Any],
        session_id: str,
        user_id: str,
        kind: str,
        invocation_id: str | None,
    ) -> None:
        """Insert a task row. ``task`` is 0.3 task JSON; its ``history`` is not stored."""
        body = {k: v for k, v in task.items() if k != "history"}
        ts = now_iso()
        async with self._write_lock:
            await self.db.execute(
                "INSERT INTO tasks (id, session_id, user_id, kind, invocation_id, state, created_at, "
                "updated_at, body) VALUES (?,?,?,?,?,?,?,?,?)",
                (task["id"], session_id, user_id, kind, invocation_id, task["status"]["state"], ts, ts, dumps(body)),
            )

    async def update_task(self, task: dict[str, Any]) -> None:
        body = {k: v for k, v in task.items() if k != "history"}
        async with self._write_lock:
            await self.db.execute(
                "UPDATE tasks SET state = ?, updated_at = ?, body = ? WHERE id = ?",
                (task["status"]["state"], now_iso(), dumps(body), task["id"]),
            )

    async def add_message(self, *, session_id: str, task_id: str, message: dict[str, Any]) -> int:
        async with self._write_lock:
            cur = await self.db.execute(_INSERT_MESSAGE, _message_row(session_id, task_id, message))
            seq = cur.lastrowid
            await cur.close()
        assert seq is not None
        return seq

    async def message_id_exists(self, session_id: str, message_id: str) -> bool:
        row = await self._fetchone(
            "SELECT 1 FROM messages WHERE session_id = ? AND message_id = ? LIMIT 1", (session_id, message_id)
        )
        return row is not None

    async def get_task(self, task_id: str) -> TaskRow | None:
        r = await self._fetchone(f"SELECT {_TASK_COLS} FROM tasks WHERE id = ?", (task_id,))
        return TaskRow(*r) if r else None

    async def session_tasks(self, session_id: str, include_rewound: bool = False) -> list[TaskRow]:
        where = "" if include_rewound else " AND rewound_by IS NULL"
        rows = await self._fetchall(
            f"SELECT {_TASK_COLS} FROM tasks WHERE session_id = ?{where} ORDER BY seq", (session_id,)
        )
        return [TaskRow(*r) for r in rows]

    async def task_history_bodies(self, task: TaskRow) -> list[str]:
        """Raw JSON bodies of a task's history, oldest first."""
        if task.history_refs is not None:
            return await self.message_bodies(json.loads(task.history_refs))
        rows = await self._fetchall("SELECT body FROM messages WHERE task_id = ? ORDER BY seq", (task.id,))
        return [r[0] for r in rows]

    async def tasks_history_bodies(self, tasks: Sequence[TaskRow]) -> dict[str, list[str]]:
        """History bodies for many tasks of one session, in one pass over its messages."""
        if not tasks:
            return {}
        session_id = tasks[0].session_id
        rows = await self._fetchall(
            "SELECT seq, task_id, body FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
        )
        by_seq: dict[int, str] = {}
        by_task: dict[str, list[str]] = {}
        for seq, task_id, body in rows:
            by_seq[seq] = body
            by_task.setdefault(task_id, []).append(body)
        result: dict[str, list[str]] = {}
        for task in tasks:
            if task.history_refs is not None:
                result[task.id] = [by_seq[s] for s in json.loads(task.history_refs) if s in by_seq]
            else:
                result[task.id] = by_task.get(task.id, [])
        return result

    async def message_bodies(self, seqs: Sequence[int], *, v1: bool = False) -> list[str]:
        """Raw JSON of the messages ``seqs``, in that order (0.3 JSON, or 1.0 JSON with ``v1``)."""
        if not seqs:
            return []
        column = "body_v1" if v1 else "body"
        rows = await self._fetchall(
            f"SELECT m.{column} FROM json_each(?) AS j JOIN messages AS m ON m.seq = j.value ORDER BY j.key",
            (dumps(list(seqs)),),
        )
        return [r[0] for r in rows]

    # -- rewind / fork -----------------------------------------------------------
    async def plan_rewind(self, session_id: str, invocation_id: str) -> RewindPlan:
        """Where the effective history of ``session_id`` meets ``invocation_id``.

        Raises :class:`InvocationLookupError` when the invocation is not in the
        session's effective history (unknown, other session, already rewound).
        """
        rows = await self._fetchall(
            "SELECT m.seq, m.task_id, m.invocation_id, t.seq FROM messages AS m "
            "JOIN tasks AS t ON t.id = m.task_id "
            "WHERE m.session_id = ? AND t.rewound_by IS NULL ORDER BY m.seq",
            (session_id,),
        )
        for index, (_, _, inv, task_seq) in enumerate(rows):
            if inv == invocation_id:
                effective = [HistoryEntry(seq, task_id, inv_) for seq, task_id, inv_, _ in rows[:index]]
                return RewindPlan(effective=effective, boundary_task_seq=task_seq)
        anywhere = await self._fetchone(
            "SELECT 1 FROM messages WHERE session_id = ? AND invocation_id = ? LIMIT 1",
            (session_id, invocation_id),
        )
        if anywhere:
            raise InvocationLookupError(
                "rewound",
                f"invocation {invocation_id!r} of session {session_id!r} was already rewound; "
                "choose one from the current history",
            )
        raise InvocationLookupError(
            "unknown", f"{invocation_id!r} is not an invocation of session {session_id!r}"
        )

    async def apply_rewind(
        self, *, session_id: str, rewind_task: dict[str, Any], plan: RewindPlan, user_id: str, invocation_id: str | None
    ) -> None:
        """Store the rewind task and mark the boundary task and everything after it rewound."""
        body = {k: v for k, v in rewind_task.items() if k != "history"}
        ts = now_iso()
        refs = dumps([e.seq for e in plan.effective])
        await self._transaction(
            [
                (
                    "UPDATE tasks SET rewound_by = ?, rewound_at = ? "
                    "WHERE session_id = ? AND seq >= ? AND rewound_by IS NULL",
                    (rewind_task["id"], ts, session_id, plan.boundary_task_seq),
                ),
                (
                    "INSERT INTO tasks (id, session_id, user_id, kind, invocation_id, state, created_at, "
                    "updated_at, history_refs, body) VALUES (?,?,?,?,?,?,?,?,?,?)",
                    (
                        rewind_task["id"],
                        session_id,
                        user_id,
                        "rewind",
                        invocation_id,
                        rewind_task["status"]["state"],
                        ts,
                        ts,
                        refs,
                        dumps(body),
                    ),
                ),
                ("UPDATE sessions SET updated_at = ? WHERE id = ?", (ts, session_id)),
            ]
        )

    async def create_fork(
        self, *, session: SessionRow, fork_task: dict[str, Any], messages: Sequence[dict[str, Any]]
    ) -> None:
        """Create a forked session holding one task (kind ``fork``) with ``messages``."""
        body = {k: v for k, v in fork_task.items() if k != "history"}
        ts = now_iso()
        statements: list[tuple[str, Sequence[Any]]] = [
            (
                f"INSERT INTO sessions ({_SESSION_COLS}) VALUES (?,?,?,?,?,?,?,?)",
                (
                    session.id,
                    session.user_id,
                    session.name,
                    session.agent_ref,
                    session.created_at,
                    session.updated_at,
                    session.forked_from,
                    session.forked_before_invocation_id,
                ),
            ),
            (
                "INSERT INTO tasks (id, session_id, user_id, kind, invocation_id, state, created_at, "
                "updated_at, body) VALUES (?,?,?,?,?,?,?,?,?)",
                (fork_task["id"], session.id, session.user_id, "fork", None, "completed", ts, ts, dumps(body)),
            ),
        ]
        for message in messages:
            statements.append((_INSERT_MESSAGE, _message_row(session.id, fork_task["id"], message)))
        await self._transaction(statements)

    async def fail_unfinished(self, text: str, *, terminal: Iterable[str] = TERMINAL_STATES) -> int:
        """Mark every non-terminal task failed (a process stopped mid-turn)."""
        done = tuple(terminal)
        marks = ",".join("?" for _ in done)
        rows = await self._fetchall(f"SELECT id, body FROM tasks WHERE state NOT IN ({marks})", done)
        ts = now_iso()
        statements: list[tuple[str, Sequence[Any]]] = []
        for task_id, body in rows:
            data = json.loads(body)
            data["status"] = {
                "state": "failed",
                "timestamp": ts,
                "message": {
                    "kind": "message",
                    "messageId": f"{task_id}-interrupted",
                    "role": "agent",
                    "parts": [{"kind": "text", "text": text}],
                    "contextId": data.get("contextId"),
                    "taskId": task_id,
                },
            }
            statements.append(
                ("UPDATE tasks SET state = 'failed', updated_at = ?, body = ? WHERE id = ?", (ts, dumps(data), task_id))
            )
        if statements:
            await self._transaction(statements)
        return len(statements)

    async def counts(self, session_id: str) -> tuple[int, int]:
        """(tasks, messages) rows of a session, rewound ones included -- for tests and audits."""
        t = await self._fetchone("SELECT COUNT(*) FROM tasks WHERE session_id = ?", (session_id,))
        m = await self._fetchone("SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,))
        return (t[0] if t else 0, m[0] if m else 0)


_INSERT_MESSAGE = (
    "INSERT INTO messages (session_id, task_id, message_id, invocation_id, role, body, body_v1) "
    "VALUES (?,?,?,?,?,?,?)"
)


def _message_row(session_id: str, task_id: str, message: dict[str, Any]) -> tuple[Any, ...]:
    return (
        session_id,
        task_id,
        message["messageId"],
        (message.get("metadata") or {}).get("kagent_invocation_id"),
        message["role"],
        dumps(message),
        dumps(message_v1_json(message)),
    )


def task_json(task: TaskRow, history_bodies: Sequence[str], *, mark_rewound: bool = True) -> str:
    """The task as 0.3 JSON text (history spliced in from raw message bodies)."""
    body = task.body
    if mark_rewound and task.rewound_by is not None:
        data = json.loads(body)
        meta = dict(data.get("metadata") or {})
        meta.update(
            rewindtui_rewound=True, rewindtui_rewound_by=task.rewound_by, rewindtui_rewound_at=task.rewound_at
        )
        data["metadata"] = meta
        body = dumps(data)
    return body[:-1] + ',"history":[' + ",".join(history_bodies) + "]}"
