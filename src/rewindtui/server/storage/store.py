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
  rewind task's history is stored by reference (``history_refs``: a link of task runs and message
  ``seq``, or a list of message ``seq`` in rows written before links, :mod:`.history_refs`), so the
  effective history is never copied, nor its references written whole.
* ``intents`` -- the write-ahead journal of work that spans this store and ADK's session
  database (rewind, fork, delete): written and committed before ADK is touched, removed in the
  same transaction as the store's side of the work. See :mod:`rewindtui.server.storage.recovery`.

The schema is versioned with ``PRAGMA user_version`` (:data:`SCHEMA_VERSION`); :func:`migrate`
brings an older file up to date, and a newer one is refused.

Rewind, redo and fork read the session's task log (:mod:`rewindtui.server.storage.session_log`): a
rewind (kind ``rewind``, or ``redo`` when it undid an earlier rewind) makes the session what it
was just before an invocation, as ADK does; ``rewound_by`` marks the tasks that are not current,
each with the rewind that last took it away (cleared when a redo brings it back). A rewind task's
``history_refs`` is the effective history at that moment (:mod:`.history_refs`).

Each database connection lives on its own worker thread (a one-thread executor owned by the
store, shut down and joined on close); writes are serialized by an asyncio lock and go through
one connection, reads through the other, so a reader never sees a write transaction half done.

The code is in parts along these features: :mod:`.store_schema` (the schema and its migrations),
:mod:`.store_rows` (rows as values, their SQL, page cursors, task JSON), :mod:`.store_conn` (the
connections and the read/write plumbing), :mod:`.store_tasks` (tasks and messages),
:mod:`.store_log` (the session log, rewind and fork); sessions and the journal are here. Every
name is importable from this module as before.
"""

from __future__ import annotations

import json
import logging
import sqlite3

from rewindtui.server.shared.wire import dumps, now_iso
from rewindtui.server.storage.start_failure import open_failure
from rewindtui.server.storage.store_conn import Tx, _Connection
from rewindtui.server.storage.store_log import LogStore
from rewindtui.server.storage.store_rows import (
    _INSERT_MESSAGE,
    _INSERT_TASK,
    _SESSION_COLS,
    _SESSION_EXTRAS,
    Intent,
    InvalidPageToken,
    SessionRow,
    Statement,
    TaskPage,
    TaskRow,
    _insert_session,
    _task_body,
    message_row,
    task_json,
    task_row,
)
from rewindtui.server.storage.store_schema import MIGRATIONS, SCHEMA_VERSION, SchemaTooNew, _prepare, migrate, rerender
from rewindtui.server.storage.store_tasks import TaskStore
from rewindtui.server.storage.undecodable import BadText

log = logging.getLogger(__name__)


class Store(TaskStore, LogStore):
    """Async SQLite store: one writer connection, one reader connection, each on its own thread.
    Its parts: :class:`~.store_tasks.TaskStore` (tasks and messages) and
    :class:`~.store_log.LogStore` (the session log, rewind and fork); sessions and the intent
    journal are here."""

    # -- lifecycle ---------------------------------------------------------------
    async def open(self) -> None:
        """Open (and migrate) the file. A file that is not a database, damaged or unreadable
        raises StoreOpenFailed: one line naming the file and what to do."""
        if self.database_url is not None:
            from rewindtui.server.storage.store_pg import prepare_pg

            try:
                await self._writer.open()
                await self._writer.run(prepare_pg(self.database_url))
                await self._reader.open()
            except BaseException:
                await self.close()
                raise
            self._open = True
            return
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

    async def session_names(self, user_id: str) -> list[str]:
        """The names of the user's sessions (a fork's name is made distinct from them): the
        sessions' rows only, none of :meth:`list_sessions`' counts over their tasks."""
        return [r[0] for r in await self._fetchall("SELECT name FROM sessions WHERE user_id = ?", (user_id,))]

    async def get_session_detail(self, session_id: str) -> SessionRow | None:
        """:meth:`get_session` with the fork turn and the number of rewound branches."""
        r = await self._fetchone(
            f"SELECT {_SESSION_COLS}, {_SESSION_EXTRAS} FROM sessions AS s WHERE id = ?", (session_id,)
        )
        return SessionRow(*r) if r else None

    async def rename_session(self, session_id: str, name: str) -> None:
        await self._write(
            [("UPDATE sessions SET name = ?, updated_at = ? WHERE id = ?", (name, now_iso(), session_id))]
        )

    def delete_session_statements(self, session_id: str) -> list[Statement]:
        return [
            ("DELETE FROM messages WHERE session_id = ?", (session_id,)),
            ("DELETE FROM tasks WHERE session_id = ?", (session_id,)),
            ("DELETE FROM sessions WHERE id = ?", (session_id,)),
        ]

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
        intents = []
        for r in rows:
            try:
                payload = json.loads(r[3])
            except (TypeError, ValueError):  # not text, not UTF-8 (a BadText is replaced text), not JSON
                payload = None
            if (
                not isinstance(payload, dict)
                or isinstance(r[3], BadText)
                or not isinstance(payload.get("user_id"), str)
            ):
                log.warning(
                    "journal entry %s (%s of session %s) cannot be read; left in place, not replayed", r[0], r[1], r[2]
                )
                continue
            intents.append(Intent(r[0], r[1], r[2], payload, r[4]))
        return intents

    async def counts(self, session_id: str) -> tuple[int, int]:
        """(tasks, messages) rows of a session, rewound ones included -- for tests and audits."""
        t = await self._fetchone("SELECT COUNT(*) FROM tasks WHERE session_id = ?", (session_id,))
        m = await self._fetchone("SELECT COUNT(*) FROM messages WHERE session_id = ?", (session_id,))
        return (t[0] if t else 0, m[0] if m else 0)


__all__ = [
    "MIGRATIONS",
    "SCHEMA_VERSION",
    "_INSERT_MESSAGE",
    "_INSERT_TASK",
    "Intent",
    "InvalidPageToken",
    "SchemaTooNew",
    "SessionRow",
    "Statement",
    "Store",
    "TaskPage",
    "TaskRow",
    "Tx",
    "_Connection",
    "_task_body",
    "message_row",
    "migrate",
    "rerender",
    "task_json",
    "task_row",
]
