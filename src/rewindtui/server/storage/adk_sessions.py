"""ADK's ``DatabaseSessionService`` on SQLite, with an in-process read cache.

ADK re-reads and re-validates every event of a session on each
``get_session`` -- ``Runner.run_async`` and ``Runner.rewind_async`` both start
with one. On a 1,000-turn session that is ~2,000 JSON rows turned into
pydantic ``Event`` objects, 100-250 ms per call, which alone breaks the
100 ms rewind target. The last full read of a session plus the events this process appended
since are an exact copy of what the database would return, as long as nobody else wrote it:
:class:`CachedDatabaseSessionService` keeps that copy (LRU, a few sessions) and serves full
reads from it; a session it creates is cached as created.

Someone else may write: on a team server (PostgreSQL) the other replicas, on SQLite another
process (ADK's own ``DatabaseSessionService``, a tool). So a cached copy is served only after
one cheap read says it is still current: the session row's revision marker (ADK's own
optimistic-concurrency marker) and the update times of the app's and the user's state rows,
read before the copy was made, unchanged; else the session is read whole again
(``tests/server/test_turn_reads.py``).

Writes: an event that changes no state is stored by :mod:`rewindtui.server.storage.adk_append` in one
trip (the same rows ADK's append writes, its stale-session check in the ``UPDATE``); every other
event, and anything that append cannot match, goes through ``DatabaseSessionService.append_event``
unchanged.

A read that fails on a damaged row (an event or a state that cannot be decoded) is read again
row by row (:mod:`rewindtui.server.storage.adk_damage`): an unreadable event becomes a placeholder,
an unreadable state a one-line :class:`~rewindtui.server.storage.adk_damage.DamagedAgentState`.

Not cached: partial reads (``config`` given), a read that overlapped a write
of the same session (a per-session generation counter), and any session after
an event that touched ``app:``/``user:`` state (those keys are shared with
other sessions, so the whole cache is dropped).

The SQLAlchemy engine is this class's own (public SQLAlchemy API): each connection runs
SQLite in WAL mode, and a write transaction starts with ``BEGIN IMMEDIATE`` (reads with a
plain ``BEGIN``). ADK's writes read the session row first: begun as a deferred read, two
turns on two sessions at once would each try to upgrade to a write and one would get
"database is locked" at once; begun immediately, the second waits its turn. Within this
process the writes, direct ones included, queue on an asyncio lock (first come, first served:
SQLite's own busy wait polls, and under load some writers would wait far longer than others --
in one run of 50 turns at once, direct appends that bypassed the lock took p99 from 4.1 s to
7.3 s, with no more turns/s).
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import functools
import logging
from collections import OrderedDict
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.sessions import BaseSessionService, DatabaseSessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from sqlalchemy import event as sa_event
from sqlalchemy import func, insert, make_url, select
from sqlalchemy.engine import Connection
from sqlalchemy.ext.asyncio import create_async_engine

from rewindtui.server.shared.errors import is_storage_failure
from rewindtui.server.shared.internals import (
    adk_rewind_session,
    bulk_event_writer,
    has_update_marker,
    update_marker,
)
from rewindtui.server.storage.adk_append import DirectAppender
from rewindtui.server.storage.adk_copy import NotDescribed, copy_event_rows, write_fork
from rewindtui.server.storage.adk_damage import fill_missing_authors, is_placeholder, read_session
from rewindtui.server.storage.adk_rewind import EVERY, STAND_IN, RewindIndex, stand_in_events
from rewindtui.server.storage.adk_stamps import StampsCheck

_Key = tuple[str, str, str]
log = logging.getLogger(__name__)
_SHARED_PREFIXES = (State.APP_PREFIX, State.USER_PREFIX)


def sqlite_url(path: str) -> str:
    """SQLAlchemy URL for an aiosqlite database file."""
    return f"sqlite+aiosqlite:///{path}"


class CachedDatabaseSessionService(DatabaseSessionService):
    """``DatabaseSessionService`` whose full ``get_session`` reads are cached."""

    #: events between two rewind replay checkpoints (:data:`rewindtui.server.storage.adk_rewind.EVERY`)
    rewind_every = EVERY

    def __init__(self, db_url: str, *, max_sessions: int = 64) -> None:
        engine = create_async_engine(db_url)
        if engine.dialect.name == "sqlite":
            sa_event.listen(engine.sync_engine, "connect", _on_connect)
            sa_event.listen(engine.sync_engine, "begin", _on_begin)
        super().__init__(db_engine=engine)
        #: a cached copy is served only after the database says it is still current (_current): on
        #: PostgreSQL other replicas write the same sessions; on SQLite another process may (ADK's
        #: own service, a tool), and the one read costs about a millisecond
        self._shared = True
        #: (app state, user state) revisions read before the cached copy was: the shared state
        #: another replica may change without touching the session's own row
        self._stamps: dict[_Key, tuple[Any, Any]] = {}
        self._engine = engine
        self._writes = asyncio.Lock()
        self._cache: OrderedDict[_Key, Session] = OrderedDict()
        self.max_sessions = max_sessions
        # Bumped by every write: a read that overlapped a write must not be cached.
        self._generation: dict[_Key, int] = {}
        database = make_url(db_url).database if engine.dialect.name == "sqlite" else None
        self._db_path = Path(database) if database and database != ":memory:" else None
        #: the one-trip append of plain events (None: ADK's append for every event)
        self._direct: DirectAppender | None = None
        self._direct_checked = False
        #: checkpoints of ADK's rewind replay (None: not on this ADK / schema; see :meth:`rewind_index`)
        self._rewind_index: RewindIndex | None = None
        self._rewind_checked = False
        self._extending: dict[_Key, asyncio.Task[int]] = {}
        #: the whole read of a session under way, and the write generation it began at
        self._reading: dict[_Key, tuple[int, asyncio.Future[Session | None]]] = {}
        #: the revisions' read (:mod:`.adk_stamps`: on the event loop on a SQLite file)
        self._stamps_check = StampsCheck(engine, self._db_path)

    @property
    def db_path(self) -> Path | None:
        """The SQLite file (None: another database)."""
        return self._db_path

    # -- cache helpers -------------------------------------------------------
    def _remember(self, session: Session) -> None:
        key = (session.app_name, session.user_id, session.id)
        if self.max_sessions <= 0:
            return
        self._cache[key] = _snapshot(session)
        self._cache.move_to_end(key)
        while len(self._cache) > self.max_sessions:
            self._cache.popitem(last=False)

    def forget(self, app_name: str, user_id: str, session_id: str) -> None:
        self._cache.pop((app_name, user_id, session_id), None)

    def clear_cache(self) -> None:
        self._cache.clear()

    # -- BaseSessionService ----------------------------------------------------
    async def get_session(
        self,
        *,
        app_name: str,
        user_id: str,
        session_id: str,
        config: GetSessionConfig | None = None,
    ) -> Session | None:
        key = (app_name, user_id, session_id)
        if config is None:
            cached = self._cache.get(key)
            if cached is not None and (not self._shared or await self._current(key, cached)):
                self._cache.move_to_end(key)
                return _snapshot(cached)
            # one whole read of a session at a time: a caller that comes while one is under way
            # (begun since this process last wrote the session) takes its answer -- e.g. two turns
            # of a session not yet loaded: one read, one set of event objects
            generation = self._generation.get(key, 0)
            flight = self._reading.get(key)
            if flight is None or flight[0] != generation:
                flight = (generation, asyncio.ensure_future(self._read_whole(key, generation)))
                self._reading[key] = flight
                flight[1].add_done_callback(functools.partial(self._landed, key, flight))
            session = await asyncio.shield(flight[1])
            return _snapshot(session) if session is not None else None
        return await self._read_whole(key, None, config)

    def _landed(self, key: _Key, flight: tuple[int, asyncio.Future[Session | None]], _: object) -> None:
        if self._reading.get(key) is flight:
            del self._reading[key]
        if not flight[1].cancelled():
            flight[1].exception()  # retrieved: each caller gets it raised

    async def _read_whole(
        self, key: _Key, generation: int | None, config: GetSessionConfig | None = None
    ) -> Session | None:
        """ADK's read of ``key`` (cached when whole and no write overlapped it), a damaged row read
        on its own."""
        app_name, user_id, session_id = key
        generation = self._generation.get(key, 0) if generation is None else generation
        stamps = await self._read_stamps(key) if self._shared and config is None else None
        try:
            session = await super().get_session(
                app_name=app_name, user_id=user_id, session_id=session_id, config=config
            )
        except Exception as exc:
            # a damaged row makes ADK's read fail whole: read each row on its own (:mod:`.adk_damage`)
            writer = bulk_event_writer(self)
            if writer is None or (is_storage_failure(exc) and not _undecodable(exc)):
                raise
            session = await read_session(
                writer,
                app_name=app_name,
                user_id=user_id,
                session_id=session_id,
                config=config,
                db_path=self._db_path,
                sqlite=self._engine.dialect.name == "sqlite",
            )
            if session is None or not any(is_placeholder(e) for e in session.events):
                raise  # not a damaged row: ADK's own failure, as it was
        if session is not None and any(not e.author for e in session.events):
            fill_missing_authors(session)
        if session is not None and config is None and self._generation.get(key, 0) == generation:
            if stamps is not None:
                self._stamps[key] = stamps[1:]
            self._remember(session)
        return session

    async def _read_stamps(self, key: _Key) -> tuple[str | None, Any, Any] | None:
        """(the session's revision marker, the app state's and the user state's update times), or
        None when this ADK lacks what reading them needs (then nothing is cached). One indexed
        statement reading the three update times only (:func:`.adk_stamps.stamps_query`): on SQLite
        on the event loop when SQLite answers at once (:mod:`.adk_stamps`), else through SQLAlchemy."""
        writer = bulk_event_writer(self)
        if writer is None:
            return None
        await self.prepare_tables()
        row = await self._stamps_check.read(writer, *key)
        if row is None:
            return None, None, None
        marker = writer.storage_session(update_time=row[0]).get_update_marker()  # ADK's own arithmetic
        return marker, row[1], row[2]

    async def _current(self, key: _Key, cached: Session) -> bool:
        """The cached copy of ``key`` is what the database holds now (a team server: one cheap
        read of three revisions instead of the whole session; another replica's write, to the
        session or to its app/user state, makes it stale)."""
        stamps = await self._read_stamps(key)
        current = stamps is not None and stamps[0] is not None and stamps[0] == update_marker(cached)
        if current and stamps is not None and self._stamps.get(key) == stamps[1:]:
            return True
        self._cache.pop(key, None)
        return False

    def is_cached(self, app_name: str, user_id: str, session_id: str) -> bool:
        return (app_name, user_id, session_id) in self._cache

    async def append_event(self, session: Session, event: Event) -> Event:
        key = (session.app_name, session.user_id, session.id)
        cached = self._cache.get(key)
        # The caller's copy is complete iff it is exactly the cached revision (this process is
        # the only writer of its data dir, so revision = update time + event count + last event).
        was_current = (
            cached is not None
            and cached.last_update_time == session.last_update_time
            and len(cached.events) == len(session.events)
            and (not cached.events or cached.events[-1].id == session.events[-1].id)
        )
        self._generation[key] = self._generation.get(key, 0) + 1
        # stamped before the session's newest event: a read slots it in before them (ADK orders by
        # time), so the cached copy (in append order) and the replay checkpoints past it are wrong
        out_of_order = not event.partial and await self._slots_in(key, session, event, cached if was_current else None)
        if out_of_order and self._rewind_index is not None:
            await self._rewind_index.invalidate_from(key, _column_time(event.timestamp))
        try:
            if event.partial:  # ADK does not store those
                result = await super().append_event(session=session, event=event)
            else:
                async with self._writes:
                    if await self._append_direct(session, event):
                        result = await BaseSessionService.append_event(self, session=session, event=event)
                    else:
                        result = await super().append_event(session=session, event=event)
        except BaseException:
            self._cache.pop(key, None)
            raise
        finally:
            self._generation[key] += 1
        if event.partial:
            return result
        delta = event.actions.state_delta or {}
        if any(k.startswith(_SHARED_PREFIXES) for k in delta):
            self._cache.clear()
        elif was_current and not out_of_order:
            self._remember(session)
        else:
            self._cache.pop(key, None)
        if self._rewind_index is not None and len(session.events) % self._rewind_index.every == 0:
            self.extend_checkpoints_soon(key)
        return result

    async def _slots_in(self, key: _Key, session: Session, event: Event, current: Session | None) -> bool:
        """Whether ``event`` is stamped at or before an event the session stores. Not by
        ``session.last_update_time`` alone: ADK sets it to the last *appended* event's time, so a
        second late event passed as in order. ``current``: the cached copy, exactly a full read (in
        ADK's order, its last event the newest); else one indexed look-up."""
        if event.timestamp <= session.last_update_time:
            return True
        if current is not None:
            return bool(current.events) and event.timestamp <= current.events[-1].timestamp
        index = await self.rewind_index()
        return index is not None and await index.holds_from(key, _column_time(event.timestamp))

    async def _append_direct(self, session: Session, event: Event) -> bool:
        """Store a plain event (no state delta) in one trip (:mod:`rewindtui.server.storage.adk_append`);
        False, having written nothing, when ADK's own append must decide."""
        if not self._direct_checked:
            self._direct_checked = True
            await self.prepare_tables()
            await self.rewind_index()
            writer = bulk_event_writer(self) if has_update_marker() else None
            if writer is not None and self._db_path is not None:
                with contextlib.suppress(TypeError):
                    self._direct = DirectAppender(self._db_path, writer, self._engine.dialect)
        if self._direct is None or not self._direct.handles(session, event):
            return False
        return await self._direct.append(session, event)

    async def import_events(
        self, session: Session, events: Sequence[Event], *, copied_from: _Key | None = None
    ) -> None:
        """Write ``events`` into ``session`` (a new, empty one) in one transaction -- for forks.

        With ``copied_from`` (app, user, session id of the session the events were read from, a
        fork's original) their stored rows are copied inside the database (``INSERT ... SELECT``
        over the event table's own columns, the session's key replaced): no event is serialized
        again. When the original does not hold every one of them, the rows are made as below.

        ``append_event`` costs a few ms per event (a transaction each), 8 s for a
        1,000-turn fork. This writes the same rows (``StorageEvent.from_event``)
        and applies the session-scoped state deltas in order, in one commit.
        ``app:``/``user:`` deltas are not re-applied: that state is shared with
        other sessions and the original events already changed it once. Uses
        ``DatabaseSessionService`` internals (fenced in :mod:`rewindtui.server.shared.internals`);
        without them (another ADK version) it appends event by event (minus the shared deltas).
        """
        if not events:
            return
        key = (session.app_name, session.user_id, session.id)
        self._cache.pop(key, None)
        self._generation[key] = self._generation.get(key, 0) + 1
        try:
            writer = bulk_event_writer(self)
            if writer is None:
                for event in events:
                    await self.append_event(session, _without_shared_state(event).model_copy(deep=True))
                return
            await self.prepare_tables()
            session_delta: dict[str, Any] = {}
            for event in events:
                if event.actions.state_delta:
                    session_delta.update(writer.session_state_delta(event.actions.state_delta))
            async with self._writes, writer.open_session() as sql:
                row = await sql.get(writer.storage_session, key)
                if row is None:
                    raise SessionNotFoundError(f"Session {session.id} not found.")
                if session_delta:
                    row.state.update(session_delta)
                table = writer.storage_event.__table__
                if copied_from is None or not await copy_event_rows(sql, table, copied_from, session, events):
                    # one executemany of the rows ``StorageEvent.from_event`` makes (the ORM's unit
                    # of work would track 20,000 objects for a 10,000-turn fork)
                    columns = [c.key for c in table.columns]
                    rows = [writer.storage_event.from_event(session, event) for event in events]
                    await sql.execute(insert(table), [{c: getattr(r, c) for c in columns} for r in rows])
                updated = datetime.fromtimestamp(max(e.timestamp for e in events), UTC)
                row.update_time = updated.replace(tzinfo=None) if writer.naive_datetime else updated
                await sql.commit()
        finally:
            self._generation[key] += 1
        if await self.rewind_index() is not None:
            self.extend_checkpoints_soon(key)

    async def delete_session(self, *, app_name: str, user_id: str, session_id: str) -> None:  # type: ignore[override]
        key = (app_name, user_id, session_id)
        self._cache.pop(key, None)
        self._generation[key] = self._generation.get(key, 0) + 1
        async with self._writes:
            await super().delete_session(app_name=app_name, user_id=user_id, session_id=session_id)
            index = await self.rewind_index()
            if index is not None:
                await index.forget(key)

    # -- rewind and fork from checkpoints (:mod:`rewindtui.server.storage.adk_rewind`) ----
    async def rewind_index(self) -> RewindIndex | None:
        """The replay checkpoints of this database, or None where ADK's own rewind must run (an ADK
        without the pieces, or a database on ADK's legacy schema, which has no ``event_data``)."""
        if not self._rewind_checked:
            self._rewind_checked = True
            await self.prepare_tables()
            writer = bulk_event_writer(self)
            if writer is not None and adk_rewind_session() is not None and has_update_marker():
                table = writer.storage_event.__table__
                if "event_data" in table.c:
                    index = RewindIndex(self._engine, table, every=self.rewind_every, write_lock=self._writes)
                    await index.prepare()
                    self._rewind_index = index
        return self._rewind_index

    def extend_checkpoints_soon(self, key: _Key) -> None:
        """Bring the session's replay checkpoints up to date in the background (after a checkpoint
        interval of turns, after an import), so a rewind reads at most one interval before its point."""
        if key in self._extending or self._rewind_index is None:
            return
        task = asyncio.get_running_loop().create_task(self._extend(key))
        self._extending[key] = task

    async def _extend(self, key: _Key) -> int:
        try:
            index = await self.rewind_index()
            return await index.extend(key) if index is not None else 0
        except Exception:  # derived data: a rewind computes what is missing
            log.warning("could not extend the rewind checkpoints of %s", key, exc_info=True)
            return 0
        finally:
            self._extending.pop(key, None)

    async def extend_checkpoints(self, app_name: str, user_id: str, session_id: str) -> int:
        """Bring the session's replay checkpoints up to date now; how many were written."""
        index = await self.rewind_index()
        return await index.extend((app_name, user_id, session_id)) if index is not None else 0

    async def rewind(
        self, *, app_name: str, user_id: str, session_id: str, before: str, artifact_service: Any
    ) -> Event | None:
        """``Runner.rewind_async`` computed from the events the rewind touches: the rewind event ADK
        appended, or None (nothing written) where only ``Runner.rewind_async`` can do it (see
        :meth:`rewind_index`). Raises what ``rewind_async`` raises (``SessionNotFoundError``,
        ``InvocationNotFoundError``, ``StaleSessionError``)."""
        index = await self.rewind_index()
        rewind_session = adk_rewind_session()
        if index is None or rewind_session is None or before == STAND_IN:
            return None
        key = (app_name, user_id, session_id)
        # the session row (state, revision) first: an event stored after it makes the append stale;
        # read through this class, so an unreadable state is the one-line DamagedAgentState
        base = await self.get_session(
            app_name=app_name, user_id=user_id, session_id=session_id, config=GetSessionConfig(num_recent_events=0)
        )
        if base is None:
            raise SessionNotFoundError(f"Session not found: {session_id}")
        cached = self._cache.get(key)
        if cached is not None and update_marker(cached) != update_marker(base):
            cached = None
        point = await index.point(key, before)
        base.events = stand_in_events(point, before)
        await rewind_session(
            session_service=self,
            session=base,
            rewind_before_invocation_id=before,
            artifact_service=artifact_service,
            app_name=app_name,
        )
        event = base.events[-1]
        times = [e.timestamp for e in cached.events] + [event.timestamp] if cached is not None else []
        if (
            cached is not None
            and key not in self._cache
            and all(a <= b for a, b in zip(times, times[1:], strict=False))
        ):
            # the cached copy was current: it stays so with the rewind event (a full read would
            # answer it, with the state the append left); not where an event came late (stamped
            # before one stored ahead of it), whose place a fresh read (by time) answers differently
            self._remember(base.model_copy(update={"events": [*cached.events, event]}))
        return event

    async def fork(
        self, *, app_name: str, user_id: str, session_id: str, before: str, new_session_id: str
    ) -> Session | None:
        """A new session ``new_session_id`` holding the events of ``session_id`` before the first
        event of ``before``, copied inside the database, and the session state they leave (as
        :meth:`import_events` writes it); None, having written nothing, where this cannot be done
        from checkpoints. Raises ``InvocationNotFoundError`` for an invocation the session lacks."""
        index = await self.rewind_index()
        writer = bulk_event_writer(self)
        if index is None or writer is None:
            return None
        key = (app_name, user_id, session_id)
        point = await index.point(key, before)
        state = writer.session_state_delta(point.before.fork_state())
        session = await self.create_session(app_name=app_name, user_id=user_id, session_id=new_session_id)
        new_key = (app_name, user_id, new_session_id)
        self._cache.pop(new_key, None)
        self._generation[new_key] = self._generation.get(new_key, 0) + 1
        try:
            async with self._writes:
                await write_fork(writer, index, key, new_key, point, state)
        except BaseException as exc:
            with contextlib.suppress(Exception):
                await self.delete_session(app_name=app_name, user_id=user_id, session_id=new_session_id)
            if isinstance(exc, NotDescribed):  # events stored out of time order: the full fork does it
                log.warning("%s; forking from the whole session instead", exc)
                return None
            raise
        finally:
            self._generation[new_key] += 1
        return session

    async def event_count(self, *, app_name: str, user_id: str, session_id: str) -> int:
        """How many events the session has stored (an index count: no event is read)."""
        await self.prepare_tables()
        writer = bulk_event_writer(self)
        cached = self._cache.get((app_name, user_id, session_id))
        if writer is None or cached is not None:
            session = cached or await self.get_session(app_name=app_name, user_id=user_id, session_id=session_id)
            return len(session.events) if session is not None else 0
        t = writer.storage_event.__table__
        async with self._engine.connect() as conn:
            conn = await conn.execution_options(read_only=True)
            query = (
                select(func.count())
                .select_from(t)
                .where(t.c.app_name == app_name, t.c.user_id == user_id, t.c.session_id == session_id)
            )
            return int((await conn.execute(query)).scalar_one())

    async def create_session(self, **kwargs: Any) -> Session:
        """ADK's ``create_session``; the new session is cached as created (what a full read of it
        would return: no events, the merged state, the stored revision), unless its state touched
        ``app:``/``user:`` keys, which drops the cache."""
        async with self._writes:
            session = await super().create_session(**kwargs)
        key = (session.app_name, session.user_id, session.id)
        self._generation[key] = self._generation.get(key, 0) + 1
        if any(k.startswith(_SHARED_PREFIXES) for k in kwargs.get("state") or {}):
            self._cache.clear()
        else:
            self._remember(session)
        return session

    async def close(self) -> None:
        for task in list(self._extending.values()):
            task.cancel()
            with contextlib.suppress(BaseException):
                await task
        self._cache.clear()
        if self._direct is not None:
            await self._direct.close()
        self._stamps_check.close()
        await super().close()
        await self._engine.dispose()


def _undecodable(exc: BaseException) -> bool:
    """sqlite3's failure to decode a TEXT value as UTF-8 (a damaged row, not a failing database)."""
    return "could not decode" in str(getattr(exc, "orig", None) or exc).lower()


def _column_time(timestamp: float) -> datetime:
    """An event's timestamp as ADK's ``timestamp`` column holds it (``StorageEvent.from_event``:
    a naive UTC datetime)."""
    return datetime.fromtimestamp(timestamp, UTC).replace(tzinfo=None)


def _on_connect(dbapi_connection: Any, _record: Any) -> None:
    # SQLAlchemy's recipe for pysqlite/aiosqlite: the driver emits no BEGIN of its own (see _on_begin)
    dbapi_connection.isolation_level = None
    cursor = dbapi_connection.cursor()
    try:
        # WAL: readers do not block the writer; NORMAL: no fsync per commit (still durable
        # across application crashes, which is what a local chat store needs); foreign keys, as
        # ADK turns them on for an engine it makes itself.
        cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA synchronous=NORMAL")
        cursor.execute("PRAGMA foreign_keys=ON")
    finally:
        cursor.close()


def _on_begin(connection: Connection) -> None:
    read_only = connection.get_execution_options().get("read_only", False)
    connection.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def _without_shared_state(event: Event) -> Event:
    delta = event.actions.state_delta or {}
    if not any(k.startswith(_SHARED_PREFIXES) for k in delta):
        return event
    kept = {k: v for k, v in delta.items() if not k.startswith(_SHARED_PREFIXES)}
    return event.model_copy(update={"actions": event.actions.model_copy(update={"state_delta": kept})})


def _snapshot(session: Session) -> Session:
    """An independent copy for the cache / a caller.

    Events are shared (ADK treats appended events as immutable); the event list
    and the state are copied, since callers append to and mutate those.
    """
    state = {k: copy.deepcopy(v) for k, v in session.state.items() if not k.startswith(State.TEMP_PREFIX)}
    # model_copy keeps the private storage revision marker ADK's stale-session check compares.
    return session.model_copy(update={"events": list(session.events), "state": state})
