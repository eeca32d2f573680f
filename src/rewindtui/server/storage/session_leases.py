"""One writer per session across replicas: a PostgreSQL advisory lock per session.

Replicas of a team server share one database. A turn, a rewind, a redo, a restore, a fork, an
edit and a delete each hold their session for as long as they run (what
:class:`~rewindtui.server.service.jobs.Jobs` does inside one process), and a second one on the
same session, from any replica, is refused at once.

The hold is a *session-level* advisory lock (``pg_try_advisory_lock``) on a connection of its own,
taken when the work is claimed and given back when it ends. It is not a transaction and not a row
lock: while a turn waits for its model, nothing else in the database waits for it (no other
session, no store write, no read); only another writer of the same session is turned away. A
replica that dies (kill -9, a lost network) loses its connections, and PostgreSQL drops their
locks with them: the session can be claimed again at once, and the replica that claims it first
finishes what the dead one left (:meth:`Recovery.session
<rewindtui.server.storage.recovery.Recovery.session>`).

The key is the first 8 bytes of SHA-256 over ``rewindtui-session:`` + the session id (signed 64
bits, advisory locks' key space; a collision between two sessions only makes them take turns).
"""

from __future__ import annotations

import asyncio
import hashlib
from typing import Any

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncConnection, create_async_engine


def session_key(session_id: str) -> int:
    digest = hashlib.sha256(b"rewindtui-session:" + session_id.encode()).digest()
    return int.from_bytes(digest[:8], "big", signed=True)


class SessionLeases:
    """Advisory locks on sessions, each on its own pooled connection (see the module's docstring)."""

    def __init__(self, url: str, *, pool_size: int = 10, max_overflow: int = 200) -> None:
        self._engine = create_async_engine(url, pool_size=pool_size, max_overflow=max_overflow, pool_pre_ping=True)
        self._held: dict[str, AsyncConnection] = {}
        self._lock = asyncio.Lock()

    def holds(self, session_id: str) -> bool:
        return session_id in self._held

    async def try_hold(self, session_id: str) -> bool:
        """Hold ``session_id`` (True), or False at once when another holder has it."""
        if session_id in self._held:
            return False
        conn = await self._engine.connect()
        try:
            got = (await conn.execute(text("SELECT pg_try_advisory_lock(:k)"), {"k": session_key(session_id)})).scalar()
            await conn.commit()
        except BaseException:
            await conn.close()
            raise
        if not got:
            await conn.close()
            return False
        self._held[session_id] = conn
        return True

    async def release(self, session_id: str) -> None:
        conn = self._held.pop(session_id, None)
        if conn is None:
            return
        try:
            await conn.execute(text("SELECT pg_advisory_unlock(:k)"), {"k": session_key(session_id)})
            await conn.commit()
            await conn.close()
        except Exception:  # a broken connection: dropping it drops its lock
            await _drop(conn)

    async def held_anywhere(self, session_ids: list[str]) -> set[str]:
        """Which of ``session_ids`` some replica (this one too) holds now, read from ``pg_locks``
        without taking anything: a look that never turns a writer away. (A bigint advisory key
        shows there as ``classid`` = its high 32 bits, ``objid`` = its low 32 bits, ``objsubid`` 1:
        PostgreSQL's documentation of the ``pg_locks`` view.)"""
        if not session_ids:
            return set()
        async with self._engine.connect() as conn:
            rows = await conn.execute(
                text(
                    "SELECT classid::bigint, objid::bigint FROM pg_locks WHERE locktype = 'advisory' AND granted "
                    "AND objsubid = 1 AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                )
            )
            held = {(int(c) << 32) | int(o) for c, o in rows}
        return {s for s in session_ids if session_key(s) & 0xFFFFFFFFFFFFFFFF in held}

    async def close(self) -> None:
        for session_id in list(self._held):
            await self.release(session_id)
        await self._engine.dispose()


async def _drop(conn: Any) -> None:
    try:
        await conn.invalidate()
    except Exception:
        pass
