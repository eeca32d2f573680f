"""A running turn's events in the team database, so another replica can stream them: a2a-sdk 1.3's
cross-replica event stream, on its own table.

Built on a2a-sdk (``a2a/server/cluster/database_event_stream.py`` and ``a2a/server/models.py``):

* the table is a2a-sdk's ``task_events`` (``TaskEventMixin``: ``seq`` autoincrement, ``task_id``,
  ``owner``, ``task_version``, ``event_data`` -- a serialized ``StreamResponse``), created by
  a2a-sdk's own metadata, in the schema ``rewindtui`` (the team engine's ``search_path``);
* reading it is a2a-sdk's :class:`DatabaseTaskEventStream` unchanged: ``subscribe(task_id,
  after=version)`` starts at the last row at or before ``version`` and polls the rows after it;
* writing it is the one thing a2a-sdk leaves to its ``VersionedDatabaseTaskStore`` (its
  ``publish`` is a no-op: that store appends each event in the transaction that saves the task).
  This server keeps its tasks in its own store (rewound tasks, redo records, the journal: see
  :mod:`.store`), so :meth:`TurnEventLog.publish` appends the rows itself, in the same format, a
  batch per insert.

Versions are per task and count its events (1, 2, …), as ``VersionedDatabaseTaskStore`` counts
its writes: the replica running a turn holds its session (:mod:`.session_leases`), so it is the one
writer of the task's rows. A run's first row is its ``Task`` (the stream's first event, with the
history so far); a resumed task (an answer to a tool's question) adds another, and
:meth:`TurnEventLog.last_snapshot` finds the newest, from which a follower replays the run.

Rows are kept while a follower may read them and removed afterwards (:meth:`TurnEventLog.prune`:
rows of tasks no longer running, at least one prune interval old).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import cast

from a2a.server.cluster import DatabaseTaskEventStream, VersionedEvent
from a2a.server.models import TaskEventModel
from a2a.types.a2a_pb2 import StreamResponse
from a2a.utils.proto_utils import to_stream_response
from sqlalchemy import Table, delete, func, insert, select
from sqlalchemy.ext.asyncio import AsyncEngine

log = logging.getLogger(__name__)

#: how often a follower reads the table for new rows (a2a-sdk's default is 0.5 s)
POLL_SECONDS = 0.25
#: the owner column: tasks here are scoped by this server's own store, not by a2a-sdk's owner
OWNER = "rewindtui"


class TurnEventLog(DatabaseTaskEventStream):
    """a2a-sdk's :class:`DatabaseTaskEventStream` that also writes (see the module's docstring)."""

    def __init__(self, engine: AsyncEngine, *, poll_interval_s: float = POLL_SECONDS) -> None:
        super().__init__(engine, create_table=True, table_name="task_events", poll_interval_s=poll_interval_s)
        self._table = cast(Table, TaskEventModel.__table__)
        #: the highest ``seq`` at the last prune: the next prune removes rows up to it only
        self._prune_mark: int | None = None

    async def publish(self, task_id: str, event: VersionedEvent) -> None:
        """Append one event (a2a-sdk's interface; :meth:`append` takes a batch)."""
        await self.append(task_id, [event])

    async def append(self, task_id: str, events: Sequence[VersionedEvent]) -> None:
        """Append ``events`` of ``task_id`` in one insert (one transaction)."""
        if not events:
            return
        await self._ensure_initialized()
        rows = [
            {
                "task_id": task_id,
                "owner": OWNER,
                "task_version": int(e.version._value),  # as a2a-sdk reads it (database_event_stream.py: _as_int)
                "event_data": to_stream_response(e.event).SerializeToString(),
            }
            for e in events
        ]
        async with self._engine.begin() as conn:
            await conn.execute(insert(self._table), rows)

    async def last_version(self, task_id: str) -> int:
        """The version of the task's newest row (0: none)."""
        await self._ensure_initialized()
        async with self._engine.connect() as conn:
            value = (
                await conn.execute(select(func.max(self._table.c.task_version)).where(self._table.c.task_id == task_id))
            ).scalar()
        return int(value or 0)

    async def last_snapshot(self, task_id: str) -> int | None:
        """The version of the task's newest ``Task`` row (where its current run starts), or None."""
        await self._ensure_initialized()
        async with self._engine.connect() as conn:
            rows = await conn.execute(
                select(self._table.c.task_version, self._table.c.event_data)
                .where(self._table.c.task_id == task_id)
                .order_by(self._table.c.seq.desc())
            )
            for version, data in rows:
                response = StreamResponse()
                response.ParseFromString(data)
                if response.WhichOneof("payload") == "task":
                    return int(version)
        return None

    async def prune(self, running: Sequence[str]) -> int:
        """Remove the rows of tasks not in ``running`` that were there at the previous prune; the
        number removed. (Called on a timer: a row lives at least one interval after its turn.)"""
        await self._ensure_initialized()
        async with self._engine.begin() as conn:
            mark = self._prune_mark
            self._prune_mark = (await conn.execute(select(func.max(self._table.c.seq)))).scalar()
            if mark is None:
                return 0
            statement = delete(self._table).where(self._table.c.seq <= mark)
            if running:
                statement = statement.where(self._table.c.task_id.not_in(list(running)))
            result = await conn.execute(statement)
            return int(result.rowcount or 0)
