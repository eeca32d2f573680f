"""Push notification configs kept in SQLite, so that they survive a restart of the server.

A2A's ``TaskPushNotificationConfig`` (a webhook URL, a token, optional authentication) is kept
per owner (the user id) and task, as a2a-sdk's ``PushNotificationConfigStore`` interface wants
(``set_info`` / ``get_info`` / ``get_info_for_dispatch`` / ``delete_info``), in its own file
(``push_configs.db`` in the data directory, mode 0600: a config holds the webhook's token), apart
from the conversations' store: it is the server's to-do list of deliveries, not conversation
data, and a backup need not carry it.

Each config row also says whether its notification went out: ``pending`` (registered, not sent
yet), ``delivered`` or ``failed`` (every try failed). A server that starts again reads the
pending ones (:meth:`PushConfigStore.pending_tasks`) and delivers them once their turn has ended
(a turn cut by the stop is marked failed by the recovery at start, and that is notified too).
Registering a config again (the same id) makes it pending again.

The configs are read and written on a worker thread (one connection, a lock); the file is small
(one row per registered webhook). At most :data:`MAX_CONFIGS_PER_TASK` configs are kept per
task and owner (a client that registers more loses the oldest).
"""

from __future__ import annotations

import asyncio
import os
import sqlite3
import threading
import time
from pathlib import Path

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver
from a2a.server.tasks.push_notification_config_store import (
    PushNotificationConfigStore,
    normalize_push_notification_config,
)
from a2a.types.a2a_pb2 import TaskPushNotificationConfig

PENDING, DELIVERED, FAILED = "pending", "delivered", "failed"
MAX_CONFIGS_PER_TASK = 10

_SCHEMA = """
CREATE TABLE IF NOT EXISTS push_configs (
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    body BLOB NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    updated_at REAL NOT NULL,
    PRIMARY KEY (owner, task_id, config_id)
);
CREATE INDEX IF NOT EXISTS push_configs_by_task ON push_configs(task_id);
CREATE INDEX IF NOT EXISTS push_configs_pending ON push_configs(state);
"""


class PushConfigStore(PushNotificationConfigStore):
    """a2a-sdk's push config store interface over a SQLite file."""

    def __init__(self, path: Path, owner_resolver: OwnerResolver) -> None:
        self.path = Path(path)
        self.owner_resolver = owner_resolver
        self._lock = threading.Lock()
        self._db: sqlite3.Connection | None = None

    # -- opening ---------------------------------------------------------------------------------
    def _open_sync(self) -> sqlite3.Connection:
        if self._db is None:
            if not self.path.exists():  # private from the start: a config carries its webhook's token
                os.close(os.open(self.path, os.O_CREAT | os.O_WRONLY, 0o600))
            db = sqlite3.connect(self.path, check_same_thread=False, isolation_level=None)
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA busy_timeout=5000")
            db.executescript(_SCHEMA)
            self._db = db
        return self._db

    def _run(self, sql: str, args: tuple[object, ...] = ()) -> list[tuple[object, ...]]:
        with self._lock:
            db = self._open_sync()
            return db.execute(sql, args).fetchall()

    async def _q(self, sql: str, *args: object) -> list[tuple[object, ...]]:
        return await asyncio.to_thread(self._run, sql, args)

    async def open(self) -> None:
        await asyncio.to_thread(self._run, "SELECT 1")

    async def close(self) -> None:
        def close() -> None:
            with self._lock:
                if self._db is not None:
                    self._db.close()
                    self._db = None

        await asyncio.to_thread(close)

    # -- a2a-sdk's interface ---------------------------------------------------------------------
    async def set_info(
        self, task_id: str, notification_config: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        owner = self.owner_resolver(context)
        stored = normalize_push_notification_config(task_id, notification_config)

        def write() -> None:
            with self._lock:
                db = self._open_sync()
                with db:
                    db.execute("BEGIN IMMEDIATE")
                    db.execute(
                        "INSERT INTO push_configs(owner, task_id, config_id, body, state, updated_at) "
                        "VALUES (?,?,?,?,?,?) "
                        "ON CONFLICT(owner, task_id, config_id) DO UPDATE SET "
                        "body=excluded.body, state=excluded.state, updated_at=excluded.updated_at",
                        (owner, task_id, stored.id, stored.SerializeToString(), PENDING, time.time()),
                    )
                    db.execute(
                        "DELETE FROM push_configs WHERE owner=? AND task_id=? AND config_id NOT IN ("
                        "SELECT config_id FROM push_configs WHERE owner=? AND task_id=? "
                        "ORDER BY updated_at DESC LIMIT ?)",
                        (owner, task_id, owner, task_id, MAX_CONFIGS_PER_TASK),
                    )

        await asyncio.to_thread(write)
        result = TaskPushNotificationConfig()
        result.CopyFrom(stored)
        return result

    @staticmethod
    def _configs(rows: list[tuple[object, ...]]) -> list[TaskPushNotificationConfig]:
        out = []
        for (body,) in rows:
            config = TaskPushNotificationConfig()
            config.ParseFromString(body if isinstance(body, bytes) else bytes(str(body), "utf-8"))
            out.append(config)
        return out

    async def get_info(self, task_id: str, context: ServerCallContext) -> list[TaskPushNotificationConfig]:
        owner = self.owner_resolver(context)
        rows = await self._q(
            "SELECT body FROM push_configs WHERE owner=? AND task_id=? ORDER BY updated_at", owner, task_id
        )
        return self._configs(rows)

    async def get_info_for_dispatch(self, task_id: str) -> list[TaskPushNotificationConfig]:
        rows = await self._q("SELECT body FROM push_configs WHERE task_id=? ORDER BY updated_at", task_id)
        return self._configs(rows)

    async def delete_info(self, task_id: str, context: ServerCallContext, config_id: str | None = None) -> None:
        owner = self.owner_resolver(context)
        if config_id is None:
            await self._q("DELETE FROM push_configs WHERE owner=? AND task_id=?", owner, task_id)
        else:
            await self._q(
                "DELETE FROM push_configs WHERE owner=? AND task_id=? AND config_id=?", owner, task_id, config_id
            )

    # -- delivery bookkeeping --------------------------------------------------------------------
    async def mark(self, task_id: str, config_id: str, state: str) -> None:
        """A config's notification went out (``delivered``) or gave up (``failed``)."""
        await self._q(
            "UPDATE push_configs SET state=?, updated_at=? WHERE task_id=? AND config_id=?",
            state,
            time.time(),
            task_id,
            config_id,
        )

    async def state_of(self, task_id: str, config_id: str) -> str | None:
        rows = await self._q("SELECT state FROM push_configs WHERE task_id=? AND config_id=?", task_id, config_id)
        return str(rows[0][0]) if rows else None

    async def pending_tasks(self) -> list[tuple[str, str]]:
        """(owner, task id) of every task with a config whose notification has not gone out."""
        rows = await self._q("SELECT DISTINCT owner, task_id FROM push_configs WHERE state=?", PENDING)
        return [(str(owner), str(task)) for owner, task in rows]
