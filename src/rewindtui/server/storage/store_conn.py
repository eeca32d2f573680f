"""The store's plumbing: one sqlite3 connection per worker thread, write transactions, and the
base the store's parts share (reads on the reader connection, writes serialized on the writer)."""

from __future__ import annotations

import asyncio
import sqlite3
from collections.abc import AsyncIterator, Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any, TypeVar

from rewindtui.server.storage.store_rows import Statement
from rewindtui.server.storage.undecodable import decode_text

T = TypeVar("T")


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
            # a run of one statement (a fork's thousands of message rows) goes as one executemany
            i = 0
            while i < len(todo):
                sql = todo[i][0]
                j = i + 1
                while j < len(todo) and todo[j][0] == sql:
                    j += 1
                if j - i > 1:
                    conn.executemany(sql, [params for _, params in todo[i:j]])
                else:
                    conn.execute(sql, todo[i][1])
                i = j

        await self._conn.run(run)

    async def fetchall(self, sql: str, params: Sequence[Any] = ()) -> list[tuple[Any, ...]]:
        return await self._conn.run(lambda conn: conn.execute(sql, params).fetchall())

    async def changes(self, statement: Statement) -> int:
        """Run one statement; how many rows it inserted, changed or deleted."""
        sql, params = statement
        return int(await self._conn.run(lambda conn: conn.execute(sql, params).rowcount))


class StoreBase:
    """The connections and the read/write plumbing :class:`~rewindtui.server.storage.store.Store`'s
    parts share."""

    def __init__(self, path: Path, *, busy_timeout_ms: int = 2000, database_url: str | None = None) -> None:
        """The store in the SQLite file ``path``, or, given a ``postgresql+asyncpg://`` URL, in
        that PostgreSQL database (:mod:`.store_pg`: the same SQL, the same connection calls)."""
        self.path = Path(path)
        self.database_url = database_url
        self._pg: Any = None
        self._writer: Any
        self._reader: Any
        if database_url is not None:
            from rewindtui.server.storage.store_pg import PgEngine

            self._pg = PgEngine(database_url)
            self._writer = self._pg.connection("w", dedicated=True)
            self._reader = self._pg.connection("r", dedicated=False)
        else:
            self._writer = _Connection(self.path, busy_timeout_ms, "w")
            self._reader = _Connection(self.path, busy_timeout_ms, "r")
        self._write_lock = asyncio.Lock()
        self._open = False

    @property
    def engine_name(self) -> str:
        """``sqlite`` or ``postgresql``."""
        return "sqlite" if self._pg is None else "postgresql"

    async def close(self) -> None:
        self._open = False
        for conn in (self._reader, self._writer):
            await conn.close()
        if self._pg is not None:
            await self._pg.dispose()

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


def _rollback(conn: sqlite3.Connection) -> None:
    if conn.in_transaction:
        conn.execute("ROLLBACK")
