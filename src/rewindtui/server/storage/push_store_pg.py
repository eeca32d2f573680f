"""Push-notification configs of a team server, in its PostgreSQL database (every replica sees a
config, whichever replica took the request that registered it).

:class:`~rewindtui.server.storage.push_store.PushConfigStore`'s statements, run through the task
store's PostgreSQL connection (:mod:`.store_pg`: placeholders translated, errors as
:mod:`sqlite3`'s), on a table ``push_configs`` in the schema ``rewindtui`` (``body`` is ``bytea``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import Any

from a2a.server.context import ServerCallContext
from a2a.server.owner_resolver import OwnerResolver
from a2a.server.tasks.push_notification_config_store import normalize_push_notification_config
from a2a.types.a2a_pb2 import TaskPushNotificationConfig

from rewindtui.server.storage.push_store import MAX_CONFIGS_PER_TASK, PENDING, PushConfigStore
from rewindtui.server.storage.store_pg import PgEngine

_SCHEMA = (
    "CREATE SCHEMA IF NOT EXISTS rewindtui",
    """CREATE TABLE IF NOT EXISTS rewindtui.push_configs (
    owner TEXT NOT NULL,
    task_id TEXT NOT NULL,
    config_id TEXT NOT NULL,
    body BYTEA NOT NULL,
    state TEXT NOT NULL DEFAULT 'pending',
    updated_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (owner, task_id, config_id)
)""",
    "CREATE INDEX IF NOT EXISTS push_configs_by_task ON rewindtui.push_configs(task_id)",
    "CREATE INDEX IF NOT EXISTS push_configs_pending ON rewindtui.push_configs(state)",
)


class PgPushConfigStore(PushConfigStore):
    """The push configs in PostgreSQL (see the module's docstring)."""

    def __init__(self, database_url: str, owner_resolver: OwnerResolver) -> None:
        super().__init__(Path("push_configs (PostgreSQL)"), owner_resolver)
        self._pg = PgEngine(database_url, pool_size=2)
        self._conn = self._pg.connection("push", dedicated=False)

    async def _q(self, sql: str, *args: object) -> list[tuple[object, ...]]:
        return await self._conn.run(lambda conn: conn.execute(sql, args).fetchall())

    async def open(self) -> None:
        await self._conn.open()

        def create(conn: Any) -> None:
            for statement in _SCHEMA:
                conn.execute(statement)

        await self._conn.run(create)

    async def close(self) -> None:
        await self._conn.close()
        await self._pg.dispose()

    async def set_info(
        self, task_id: str, notification_config: TaskPushNotificationConfig, context: ServerCallContext
    ) -> TaskPushNotificationConfig:
        owner = self.owner_resolver(context)
        stored = normalize_push_notification_config(task_id, notification_config)
        body = stored.SerializeToString()

        def write(conn: Any) -> None:
            conn.execute("BEGIN")
            try:
                conn.execute(
                    "INSERT INTO push_configs(owner, task_id, config_id, body, state, updated_at) VALUES (?,?,?,?,?,?) "
                    "ON CONFLICT(owner, task_id, config_id) DO UPDATE SET body=excluded.body, state=excluded.state, "
                    "updated_at=excluded.updated_at",
                    (owner, task_id, stored.id, body, PENDING, time.time()),
                )
                conn.execute(
                    "DELETE FROM push_configs WHERE owner=? AND task_id=? AND config_id NOT IN ("
                    "SELECT config_id FROM push_configs WHERE owner=? AND task_id=? ORDER BY updated_at DESC LIMIT ?)",
                    (owner, task_id, owner, task_id, MAX_CONFIGS_PER_TASK),
                )
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        await self._conn.run(write)
        result = TaskPushNotificationConfig()
        result.CopyFrom(stored)
        return result
