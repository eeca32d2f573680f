"""The ADK session cache's check before a turn, read on the event loop in one plain statement.

Before :class:`~rewindtui.server.storage.adk_sessions.CachedDatabaseSessionService` serves a
cached session it reads three revisions: the session row's ``update_time`` (ADK's revision marker)
and the update times of the app's and the user's state rows (:func:`stamps_query`). Through
SQLAlchemy and aiosqlite that is a pool checkout, ``BEGIN``, the select, the fetch and the
rollback, each a hop to aiosqlite's thread and back: about a millisecond of a turn under load, for
a statement SQLite answers in tens of microseconds.

:class:`StampReader` runs the same statement -- compiled by SQLAlchemy from ADK's own tables for
the engine's dialect, every value through its column type's result processor, as SQLAlchemy's
read hands it back -- on a sqlite3 connection of its own, on the event loop, and never waiting:
its busy timeout is 0 and it is ``query_only``. A WAL database lets a reader read while another
connection writes, so the read does not wait for this server's writes nor another process's;
where SQLite says the database is busy all the same (another connection holding it in exclusive
locking mode, a database not in WAL mode while someone writes, WAL recovery after a crash) or
anything else fails, :meth:`StampReader.read` raises and :class:`StampsCheck` reads through
SQLAlchemy as before, which waits its turn. ``tests/server/test_adk_stamps.py`` holds the two reads equal.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

from sqlalchemy import bindparam, select
from sqlalchemy.engine import Dialect
from sqlalchemy.ext.asyncio import AsyncEngine
from sqlalchemy.sql import Select
from sqlalchemy.sql.elements import ColumnElement

from rewindtui.server.shared.internals import BulkEventWriter
from rewindtui.server.storage.adk_append import Prepared

Stamps = tuple[Any, Any, Any]


def stamps_query(
    writer: BulkEventWriter, app_name: ColumnElement[Any] | str, user_id: ColumnElement[Any] | str, session_id: Any
) -> Select[Any]:
    """The session row's, the app state's and the user state's ``update_time`` in one indexed
    statement (no state is decoded: a damaged one is the full read's to report)."""
    sessions = writer.storage_session.__table__
    apps = writer.storage_app_state.__table__
    users = writer.storage_user_state.__table__
    return select(
        sessions.c.update_time,
        select(apps.c.update_time).where(apps.c.app_name == app_name).scalar_subquery(),
        select(users.c.update_time).where(users.c.app_name == app_name, users.c.user_id == user_id).scalar_subquery(),
    ).where(sessions.c.app_name == app_name, sessions.c.user_id == user_id, sessions.c.id == session_id)


class StampReader:
    """:func:`stamps_query` on a connection of its own, on the caller's thread, never waiting."""

    def __init__(self, path: Path, writer: BulkEventWriter, dialect: Dialect) -> None:
        query = stamps_query(writer, bindparam("app_name"), bindparam("user_id"), bindparam("session_id"))
        self._query = Prepared(query, dialect)
        self._processors: list[Callable[[Any], Any] | None] = [
            column.type.dialect_impl(dialect).result_processor(dialect, None) for column in query.selected_columns
        ]
        self._path = path
        self._conn: sqlite3.Connection | None = None

    def read(self, app_name: str, user_id: str, session_id: str) -> Stamps | None:
        """The three update times as SQLAlchemy reads them; None when there is no such session.
        Raises ``sqlite3.Error`` when SQLite cannot answer at once (busy) or at all."""
        conn = self._conn
        if conn is None:
            # timeout=0: a lock makes the read fail now rather than hold the event loop
            conn = sqlite3.connect(self._path, timeout=0, isolation_level=None, check_same_thread=False)
            try:
                conn.execute("PRAGMA query_only=ON")
            except BaseException:
                conn.close()
                raise
            self._conn = conn
        params = self._query.params({"app_name": app_name, "user_id": user_id, "session_id": session_id})
        # every row fetched: the statement runs to its end and is reset, so no read snapshot stays
        # open between checks (an open one would hold back every WAL checkpoint)
        rows = conn.execute(self._query.sql, params).fetchall()
        if not rows:
            return None
        row = rows[0]
        first, app, user = (value if fn is None else fn(value) for fn, value in zip(self._processors, row, strict=True))
        return first, app, user

    def close(self) -> None:
        conn, self._conn = self._conn, None
        if conn is not None:
            conn.close()


class StampsCheck:
    """The stamps of a session: on the event loop where the database is a SQLite file and SQLite
    answers at once (:class:`StampReader`), else through SQLAlchemy (``engine``), which waits."""

    def __init__(self, engine: AsyncEngine, path: Path | None) -> None:
        self._engine = engine
        self._path = path
        self._reader: StampReader | None = None

    async def read(self, writer: BulkEventWriter, app_name: str, user_id: str, session_id: str) -> Stamps | None:
        """The three update times (None: no such session)."""
        if self._path is not None:
            if self._reader is None:
                self._reader = StampReader(self._path, writer, self._engine.dialect)
            try:
                return self._reader.read(app_name, user_id, session_id)
            except sqlite3.Error:
                pass  # busy, or not answerable at once: SQLAlchemy's read waits its turn
        return await self.read_waiting(writer, app_name, user_id, session_id)

    async def read_waiting(
        self, writer: BulkEventWriter, app_name: str, user_id: str, session_id: str
    ) -> Stamps | None:
        """The same read through SQLAlchemy (a pooled connection, a read-only transaction)."""
        async with self._engine.connect() as conn:
            conn = await conn.execution_options(read_only=True)
            row = (await conn.execute(stamps_query(writer, app_name, user_id, session_id))).first()
        return None if row is None else (row[0], row[1], row[2])

    def close(self) -> None:
        if self._reader is not None:
            self._reader.close()
