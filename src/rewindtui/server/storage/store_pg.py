"""The task store on PostgreSQL: the same store (:class:`~rewindtui.server.storage.store.Store`),
its SQL run through SQLAlchemy's asyncpg dialect instead of :mod:`sqlite3`.

The store's parts are written against a DB-API-like connection (``conn.execute(sql, params)``
returning rows, ``?`` placeholders, SQLite's JSON functions). :class:`PgConnection` gives them one
on PostgreSQL: each call runs the part's function with :meth:`AsyncConnection.run_sync` (SQLAlchemy's
own bridge from synchronous code to an async driver), through :class:`_PgConn`, which

* rewrites the statement once (:func:`translate`, cached): ``?`` placeholders to ``$n``; SQLite's
  JSON functions to the ``rt_json_*`` functions this module creates (same meaning, on ``jsonb``);
  ``IS NOT ?`` to ``IS DISTINCT FROM``; ``CROSS JOIN … ON`` to ``JOIN … ON``;
* turns ``BEGIN IMMEDIATE`` (SQLite: no other writer until the transaction ends) into ``BEGIN``
  plus a transaction-scoped advisory lock (:data:`WRITE_LOCK_KEY`): every replica's store writes
  are serialized the way one SQLite file serializes them, and the lock goes with the transaction
  (a killed replica's lock goes with its connection);
* raises the :mod:`sqlite3` exception classes the callers already handle
  (:class:`sqlite3.IntegrityError` for a unique key, :class:`PgStoreError` -- a
  :class:`sqlite3.OperationalError` -- for the rest), the driver's error as ``__cause__``.

The tables live in the PostgreSQL schema :data:`PG_SCHEMA` (``rewindtui``), beside ADK's tables
in ``public`` (both have a ``sessions`` table). The schema version is the row of
``rewindtui.schema_version``; the same numbers as the SQLite file's ``PRAGMA user_version``
(:data:`~rewindtui.server.storage.store_schema.SCHEMA_VERSION`), with PostgreSQL's own statements
(:data:`PG_MIGRATIONS`). Two replicas starting at once migrate one after the other (an advisory
lock), and a database written by a newer rewindtui is refused in one sentence.
"""

from __future__ import annotations

import asyncio
import re
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from contextlib import asynccontextmanager
from functools import lru_cache
from typing import Any, NoReturn, TypeVar

from sqlalchemy import exc as sa_exc
from sqlalchemy import make_url, text
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine, create_async_engine
from sqlalchemy.pool import NullPool

from rewindtui.server.storage.store_schema import SCHEMA_VERSION, SchemaTooNew, rerender

T = TypeVar("T")

#: the PostgreSQL schema (namespace) of the store's tables
PG_SCHEMA = "rewindtui"
#: ``pg_advisory_xact_lock`` key of a store write transaction (any replica): ASCII "rwt-stor"
WRITE_LOCK_KEY = 0x7277742D73746F72
#: ``pg_advisory_lock`` key held while a replica migrates the schema: ASCII "rwt-migr"
MIGRATE_LOCK_KEY = 0x7277742D6D696772


#: ``pg_advisory_lock`` key held while a replica starts (creates its tables, ADK's too): "rwt-strt"
STARTUP_LOCK_KEY = 0x7277742D73747274


@asynccontextmanager
async def startup_lock(url: str | None) -> AsyncIterator[None]:
    """Held while a replica creates or migrates tables (ours and ADK's, whose ``create_all``
    two replicas starting at once would race); nothing on SQLite (one server per data dir)."""
    if not is_postgres_url(url):
        yield
        return
    assert url is not None
    engine = create_async_engine(url, poolclass=NullPool)
    try:
        async with engine.connect() as conn:
            await conn.execute(text(f"SELECT pg_advisory_lock({STARTUP_LOCK_KEY})"))
            await conn.commit()
            try:
                yield
            finally:
                await conn.execute(text(f"SELECT pg_advisory_unlock({STARTUP_LOCK_KEY})"))
                await conn.commit()
    finally:
        await engine.dispose()


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and make_url(str(url)).get_backend_name() == "postgresql"


def shown_url(url: str) -> str:
    """``url`` as said in messages: without its password."""
    return make_url(url).render_as_string(hide_password=True)


class PgStoreError(sqlite3.OperationalError):
    """A PostgreSQL error in the store (the driver's error is its ``__cause__``)."""


# -- the functions SQLite has built in ---------------------------------------------------------
_FUNCTIONS: tuple[str, ...] = (
    """CREATE OR REPLACE FUNCTION rt_json_each(doc text) RETURNS TABLE(key bigint, value text)
LANGUAGE sql IMMUTABLE AS $f$
  SELECT (e.o - 1)::bigint, e.v FROM jsonb_array_elements_text(doc::jsonb) WITH ORDINALITY AS e(v, o)
$f$""",
    """CREATE OR REPLACE FUNCTION rt_json_valid(doc text) RETURNS boolean
LANGUAGE plpgsql IMMUTABLE AS $f$
BEGIN
  IF doc IS NULL THEN RETURN NULL; END IF;
  PERFORM doc::jsonb;
  RETURN true;
EXCEPTION WHEN others THEN
  RETURN false;
END
$f$""",
    """CREATE OR REPLACE FUNCTION rt_json_extract(doc text, path text) RETURNS text
LANGUAGE sql IMMUTABLE AS $f$
  SELECT doc::jsonb #>> string_to_array(substr(path, 3), '.')
$f$""",
    """CREATE OR REPLACE FUNCTION rt_json_set(doc text, path text, val bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $f$
  SELECT jsonb_set(doc::jsonb, string_to_array(substr(path, 3), '.'), to_jsonb(val), true)::text
$f$""",
    """CREATE OR REPLACE FUNCTION rt_json_append(doc text, val bigint) RETURNS text
LANGUAGE sql IMMUTABLE AS $f$
  SELECT (doc::jsonb || to_jsonb(val))::text
$f$""",
    """CREATE OR REPLACE FUNCTION rt_json_array_length(doc text) RETURNS bigint
LANGUAGE sql IMMUTABLE AS $f$
  SELECT jsonb_array_length(doc::jsonb)::bigint
$f$""",
)

_SCHEMA_V3 = """
CREATE TABLE sessions (
    id TEXT PRIMARY KEY,
    user_id TEXT NOT NULL,
    name TEXT NOT NULL,
    agent_ref TEXT NOT NULL,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    forked_from TEXT,
    forked_before_invocation_id TEXT
);
CREATE INDEX sessions_by_user ON sessions(user_id, updated_at);
CREATE TABLE tasks (
    seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
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
CREATE INDEX tasks_by_session ON tasks(session_id, seq);
CREATE INDEX tasks_by_user_update ON tasks(user_id, updated_at, seq);
CREATE INDEX tasks_log ON tasks(session_id, seq, id, kind, invocation_id, rewound_by, created_at);
CREATE TABLE messages (
    seq BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    session_id TEXT NOT NULL,
    task_id TEXT NOT NULL,
    message_id TEXT NOT NULL,
    invocation_id TEXT,
    role TEXT NOT NULL,
    body TEXT NOT NULL,
    body_v1 TEXT NOT NULL,
    render_version TEXT
);
CREATE INDEX messages_by_session ON messages(session_id, seq);
CREATE INDEX messages_by_task ON messages(task_id, seq);
CREATE UNIQUE INDEX messages_unique_id ON messages(session_id, message_id);
CREATE INDEX messages_log ON messages(session_id, seq, task_id, invocation_id);
CREATE TABLE intents (
    id TEXT PRIMARY KEY,
    kind TEXT NOT NULL,
    session_id TEXT NOT NULL,
    payload TEXT NOT NULL,
    created_at TEXT NOT NULL
)
"""

#: schema version -> PostgreSQL statements that bring the previous version to it. PostgreSQL came
#: in at version 3, so an empty database goes straight to 3 (versions 1 and 2 are SQLite-only steps).
PG_MIGRATIONS: dict[int, str] = {3: _SCHEMA_V3}
_FIRST_PG_VERSION = min(PG_MIGRATIONS)


# -- SQL translation -----------------------------------------------------------------------------
_REWRITES: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^\s*BEGIN IMMEDIATE\s*$", re.I), "BEGIN"),
    # a stored message's soundness check (undecodable.sound_sql) is SQLite's JSON functions in C;
    # here it is 0, so every body is checked in Python (the same check, which also says why)
    (
        re.compile(
            r"CASE WHEN (\S+) IS NOT NULL AND json_valid\(\1(?:, 1)?\) THEN CASE WHEN json_type.*?"
            r"THEN 1 ELSE 0 END ELSE 0 END ELSE 0 END",
            re.S,
        ),
        "0",
    ),
    (re.compile(r"json_insert\((\w+), '\$\[#\]', ", re.I), r"rt_json_append(\1, "),
    (re.compile(r"SELECT value FROM json_each\(", re.I), "SELECT value::bigint FROM rt_json_each("),
    (re.compile(r"\bjson_(each|valid|extract|set|array_length)\(", re.I), r"rt_json_\1("),
    (re.compile(r"(\b\w+\.seq) = j\.value\b"), r"\1 = j.value::bigint"),
    (re.compile(r"\bIS NOT \?", re.I), "IS DISTINCT FROM ?"),
    (re.compile(r"\bCROSS JOIN\b", re.I), "JOIN"),
)


@lru_cache(maxsize=1024)
def translate(sql: str) -> str:
    """``sql`` (the store's SQLite dialect) as PostgreSQL: see the module's docstring."""
    for pattern, replacement in _REWRITES:
        sql = pattern.sub(replacement, sql)
    out: list[str] = []
    n = 0
    quoted = False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
        if ch == "?" and not quoted:
            n += 1
            out.append(f"${n}")
        else:
            out.append(ch)
    return "".join(out)


def _raise(error: sa_exc.DBAPIError) -> NoReturn:
    orig = getattr(error, "orig", None) or error
    if isinstance(error, sa_exc.IntegrityError):
        raise sqlite3.IntegrityError(str(orig)) from error
    raise PgStoreError(str(orig)) from error


class _Rows:
    """A statement's result, as much of a ``sqlite3.Cursor`` as the store uses."""

    def __init__(self, rows: list[tuple[Any, ...]], rowcount: int) -> None:
        self._rows = rows
        self.rowcount = rowcount

    def fetchall(self) -> list[tuple[Any, ...]]:
        return self._rows

    def fetchone(self) -> tuple[Any, ...] | None:
        return self._rows[0] if self._rows else None

    def __iter__(self) -> Any:
        return iter(self._rows)


class _PgConn:
    """The ``sqlite3.Connection`` calls the store makes, on one PostgreSQL connection (synchronous
    code inside :meth:`AsyncConnection.run_sync`)."""

    def __init__(self, conn: Connection) -> None:
        self._conn = conn

    def execute(self, sql: str, params: Sequence[Any] = ()) -> _Rows:
        pg = translate(sql)
        try:
            result = self._conn.exec_driver_sql(pg, tuple(params))
            rows = [tuple(r) for r in result.fetchall()] if result.returns_rows else []
            rowcount = result.rowcount
            if pg == "BEGIN":
                self._conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({WRITE_LOCK_KEY})")
        except sa_exc.DBAPIError as error:
            _raise(error)
        return _Rows(rows, rowcount)

    def executemany(self, sql: str, seq_of_params: Iterable[Sequence[Any]]) -> None:
        todo = [tuple(p) for p in seq_of_params]
        if not todo:
            return
        try:
            self._conn.exec_driver_sql(translate(sql), todo)
        except sa_exc.DBAPIError as error:
            _raise(error)

    @property
    def in_transaction(self) -> bool:
        driver = self._conn.connection.driver_connection
        return bool(driver is not None and driver.is_in_transaction())


class PgEngine:
    """The store's SQLAlchemy engine on one PostgreSQL database (its connections find the store's
    tables first: ``search_path`` is :data:`PG_SCHEMA`, then ``public``)."""

    def __init__(self, url: str, *, pool_size: int = 5) -> None:
        self.url = url
        self.engine: AsyncEngine = create_async_engine(
            url,
            isolation_level="AUTOCOMMIT",  # transactions are the store's own BEGIN/COMMIT
            pool_size=pool_size,
            pool_pre_ping=True,
            connect_args={"server_settings": {"search_path": f"{PG_SCHEMA}, public"}},
        )

    def connection(self, name: str, *, dedicated: bool) -> PgConnection:
        return PgConnection(self, name, dedicated=dedicated)

    async def dispose(self) -> None:
        await self.engine.dispose()


class PgConnection:
    """What :class:`~rewindtui.server.storage.store_conn._Connection` is on SQLite: ``run(fn)``
    calls ``fn`` with a connection. ``dedicated`` (the writer): one connection for the store's
    life, so a transaction spans calls; else each call takes one from the pool (readers in
    parallel)."""

    def __init__(self, engine: PgEngine, name: str, *, dedicated: bool) -> None:
        self._engine = engine
        self.name = name
        self._dedicated = dedicated
        self._conn: AsyncConnection | None = None
        self._lock = asyncio.Lock()
        self._open = False

    async def open(self) -> None:
        if self._dedicated:
            self._conn = await self._engine.engine.connect()
        self._open = True

    async def run(self, fn: Callable[[Any], T]) -> T:
        if not self._open:
            raise RuntimeError("store is not open")

        def call(conn: Connection) -> T:
            return fn(_PgConn(conn))

        try:
            if self._conn is not None:
                async with self._lock:
                    return await self._conn.run_sync(call)
            async with self._engine.engine.connect() as conn:
                return await conn.run_sync(call)
        except sa_exc.DBAPIError as error:  # e.g. the connection failed before any statement
            _raise(error)

    async def close(self) -> None:
        self._open = False
        conn, self._conn = self._conn, None
        if conn is not None:
            try:
                await conn.close()
            except Exception:  # a dead server: nothing left to close
                await conn.invalidate()


# -- schema ------------------------------------------------------------------------------------
def schema_version(conn: Any) -> int:
    exists = conn.execute(
        "SELECT 1 FROM information_schema.tables WHERE table_schema = ? AND table_name = 'schema_version'",
        (PG_SCHEMA,),
    ).fetchone()
    if not exists:
        return 0
    row = conn.execute("SELECT version FROM schema_version").fetchone()
    return int(row[0]) if row else 0


def prepare_pg(url: str) -> Callable[[Any], None]:
    """What the store runs on its writer connection when it opens: create the schema and the
    functions, migrate (refusing a newer schema), re-render messages another a2a-sdk rendered."""

    def prepare(conn: Any) -> None:
        conn.execute(f"SELECT pg_advisory_lock({MIGRATE_LOCK_KEY})")
        try:
            version = schema_version(conn)
            if version > SCHEMA_VERSION:
                raise SchemaTooNew(
                    f"the database {shown_url(url)} was written by a newer rewindtui (schema {version}, this one "
                    f"knows {SCHEMA_VERSION}); upgrade rewindtui or use another --database-url"
                )
            conn.execute("BEGIN")
            try:
                conn.execute(f"CREATE SCHEMA IF NOT EXISTS {PG_SCHEMA}")
                conn.execute(f"SET LOCAL search_path TO {PG_SCHEMA}, public")
                for statement in _FUNCTIONS:
                    conn.execute(statement)
                conn.execute("CREATE TABLE IF NOT EXISTS schema_version (version integer NOT NULL)")
                for target in range(max(version + 1, _FIRST_PG_VERSION), SCHEMA_VERSION + 1):
                    for statement in PG_MIGRATIONS[target].split(";"):
                        if statement.strip():
                            conn.execute(statement)
                conn.execute("DELETE FROM schema_version")
                conn.execute("INSERT INTO schema_version (version) VALUES (?)", (max(version, SCHEMA_VERSION),))
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise
            rerender(conn)
        finally:
            conn.execute(f"SELECT pg_advisory_unlock({MIGRATE_LOCK_KEY})")

    return prepare
