"""ADK's ``append_event`` for the plain case, in one trip to a SQLite connection of our own.

``DatabaseSessionService.append_event`` is a transaction of three ORM reads and a write over
aiosqlite: the session row (to refuse a stale writer), the app and user state rows (to check
they exist and to apply deltas), then the session's new ``update_time`` and the event row --
seven round trips to aiosqlite's thread and SQLAlchemy's unit of work, twice a turn.

When the event changes no state and the caller's session carries the stored revision it was
read at, what ADK stores is only: ``update_time`` set to the event's time, and the event row
``StorageEvent.from_event`` makes. :class:`DirectAppender` writes exactly that, in one
function run on its own thread: ``BEGIN IMMEDIATE``; one ``UPDATE`` whose ``WHERE`` is ADK's
checks (the session row still at the caller's revision, the app and user state rows present);
the event ``INSERT``; ``COMMIT``. If the ``UPDATE`` matches no row nothing is written and the
caller falls back to ADK's own append, which then raises what ADK raises.

The statements are compiled by SQLAlchemy from ADK's own tables for the engine's dialect, and
every value goes through its column type's bind processor (ADK's ``PreciseTimestamp`` and
``DynamicJSON``), so a row is byte for byte what ADK's ORM writes. The connection runs with
the pragmas of the service's own (WAL, ``synchronous=NORMAL``, foreign keys).
"""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import Callable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.session import Session
from sqlalchemy import and_, bindparam, exists, insert, update
from sqlalchemy.engine import Dialect
from sqlalchemy.sql import ClauseElement
from sqlalchemy.sql.compiler import SQLCompiler
from sqlalchemy.sql.elements import BindParameter

from rewindtui.server.shared.internals import BulkEventWriter, set_update_marker, update_marker
from rewindtui.server.storage.store import _Connection as Connection

BUSY_TIMEOUT_MS = 30_000


class Prepared:
    """A statement compiled once, and how to turn named values into its positional parameters."""

    def __init__(self, statement: ClauseElement, dialect: Dialect) -> None:
        compiled = statement.compile(dialect=dialect)
        assert isinstance(compiled, SQLCompiler)
        if compiled.positiontup is None:
            raise TypeError("the dialect's parameters are not positional")
        self.sql = str(compiled)
        self._names = list(compiled.positiontup)
        self._processors: dict[str, Callable[[Any], Any] | None] = {
            name: bind.type.dialect_impl(dialect).bind_processor(dialect) for name, bind in compiled.binds.items()
        }

    def params(self, values: Mapping[str, Any]) -> tuple[Any, ...]:
        out = []
        for name in self._names:
            process = self._processors[name]
            value = values[name]
            out.append(process(value) if process is not None and value is not None else value)
        return tuple(out)


class DirectAppender:
    """Stores the plain events of :meth:`append` the way ADK's ``append_event`` does."""

    def __init__(self, path: Path, writer: BulkEventWriter, dialect: Dialect) -> None:
        self._naive = writer.naive_datetime
        self._storage_event = writer.storage_event
        self._storage_session = writer.storage_session
        sessions = writer.storage_session.__table__
        app_state = writer.storage_app_state.__table__
        user_state = writer.storage_user_state.__table__
        self._events = writer.storage_event.__table__
        app: BindParameter[str] = bindparam("app_name")
        user: BindParameter[str] = bindparam("user_id")
        at_revision = and_(
            sessions.c.app_name == app,
            sessions.c.user_id == user,
            sessions.c.id == bindparam("session_id"),
            sessions.c.update_time == bindparam("revision", type_=sessions.c.update_time.type),
            exists().where(app_state.c.app_name == app),
            exists().where(and_(user_state.c.app_name == app, user_state.c.user_id == user)),
        )
        touch = update(sessions).where(at_revision).values(update_time=bindparam("updated"))
        self._touch = Prepared(touch, dialect)
        self._insert = Prepared(insert(self._events), dialect)
        self._conn = Connection(path, BUSY_TIMEOUT_MS, "adk")  # one sqlite3 connection on its own thread
        self._opened = False

    def handles(self, session: Session, event: Event) -> bool:
        """Whether ``event`` is the plain case: no state delta, a session at a known revision."""
        return not event.actions.state_delta and update_marker(session) is not None

    async def append(self, session: Session, event: Event) -> bool:
        """Store ``event`` (see the module); False, having written nothing, when the session row is
        not at the caller's revision or a state row is missing. The caller holds the write lock.

        On success ``session`` is left as ADK's append leaves it before its in-memory part: its
        ``last_update_time`` and revision marker those of the row just written.
        """
        marker = update_marker(session)
        assert marker is not None, "append() is only for what handles() accepts"
        updated = datetime.fromtimestamp(event.timestamp, UTC)
        if self._naive:
            updated = updated.replace(tzinfo=None)
        key = {"app_name": session.app_name, "user_id": session.user_id, "session_id": session.id}
        touch = self._touch.params({**key, "revision": datetime.fromisoformat(marker), "updated": updated})
        row = self._storage_event.from_event(session, event)
        insert_params = self._insert.params({c.key: getattr(row, c.key) for c in self._events.columns})

        def write(conn: sqlite3.Connection) -> bool:
            conn.execute("BEGIN IMMEDIATE")
            try:
                if conn.execute(self._touch.sql, touch).rowcount != 1:
                    conn.execute("ROLLBACK")
                    return False
                conn.execute(self._insert.sql, insert_params)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            return True

        if not self._opened:
            await self._conn.open()
            await self._conn.run(_pragmas)
            self._opened = True
        pending = asyncio.ensure_future(self._conn.run(write))
        try:
            written = await asyncio.shield(pending)
        except asyncio.CancelledError:
            await pending  # the write finishes (or not) before the caller lets go of the lock
            raise
        if written:
            revision = self._storage_session(update_time=updated)  # ADK's own revision arithmetic
            session.last_update_time = revision.get_update_timestamp()
            set_update_marker(session, revision.get_update_marker())
        return written

    async def close(self) -> None:
        await self._conn.close()


def _pragmas(conn: sqlite3.Connection) -> None:
    conn.execute("PRAGMA journal_mode=WAL")
    conn.execute("PRAGMA synchronous=NORMAL")
    conn.execute("PRAGMA foreign_keys=ON")
