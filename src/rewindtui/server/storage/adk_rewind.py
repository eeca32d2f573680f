"""ADK's rewind computed from the events it touches, not from the whole session.

``Runner.rewind_async`` reads the whole session (every event, as pydantic ``Event``\\ s) and
replays every event's ``state_delta`` and ``artifact_delta`` from the start, to know the state
and the artifact versions just before the rewind point (google-adk 2.13,
``google/adk/sessions/_rewind_utils.py``: ``compute_state_delta_for_rewind`` replays
``events[:index]``; ``compute_artifact_delta_for_rewind`` replays ``events[:index]`` and every
event). On a 10,000-turn session that is 20,000 rows decoded for each rewind, redo and fork.

Here the same replay is kept in **checkpoints**: a row per session every :data:`EVERY` events
(``rewindtui_replay_checkpoints``, beside ADK's tables, written with SQLAlchemy Core so it runs
on any engine ADK's ``DatabaseSessionService`` runs on) holding, for the first ``position``
events in ADK's order (``timestamp``, then ``id``, as ``get_session`` orders them):

* ``state``: the session-scoped state deltas replayed exactly as ADK replays them for a rewind
  (a ``None`` pops the key; ``app:``/``user:``/``temp:`` keys skipped), in ADK's key order;
* ``cleared``: the keys whose latest delta was ``None`` (a fork's state keeps them, as ADK's
  ``append_event`` stores them);
* ``artifacts``: the ``artifact_delta`` versions replayed (``dict.update``, in ADK's order).

A rewind before invocation ``X`` then reads: the first event of ``X`` (an index on the
invocation id, :data:`INVOCATION_INDEX`), the newest checkpoint before it, the events between
the two (at most :data:`EVERY` when checkpoints are current), and for the artifact versions now,
the events after the newest checkpoint (or after the rewind point, whichever is later). Events
are read in chunks as raw rows (their ``event_data`` JSON, no ``Event`` validation); the
checkpoints met on the way that are missing are written, so the first rewind of a session
written before this module pays one streamed read and the next ones do not.

The rewind event itself is made and appended by ADK's own ``rewind_session`` (the function
``rewind_async`` calls) on a session object whose events are two stand-ins carrying the
replayed state and versions: ADK computes the deltas, saves the artifact versions through the
artifact service, builds the ``Event`` (``actions.rewind_before_invocation_id``) and appends it
with ``append_event``, which checks the session row's revision as for any append. The answer is
ADK's by construction; ``tests/server/test_adk_rewind_props.py`` checks it against
``rewind_async`` on copies of random sessions.

Checkpoints describe events that never change (ADK appends, never edits); an event appended with
a timestamp not after the session's last one would slot in before them, so such an append drops
the session's checkpoints from that point (:meth:`RewindIndex.invalidate_from`), and deleting a
session deletes its checkpoints.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from google.adk.errors._invocation_not_found_error import InvocationNotFoundError
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions.state import State
from sqlalchemy import (
    Column,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    and_,
    delete,
    insert,
    literal,
    or_,
    select,
    text,
)
from sqlalchemy.ext.asyncio import AsyncConnection, AsyncEngine

#: events between two checkpoints: a rewind near the end reads at most this many before its point
EVERY = 200
#: rows fetched at a time when events are streamed
CHUNK = 500
CHECKPOINTS_TABLE = "rewindtui_replay_checkpoints"
INVOCATION_INDEX = "rewindtui_events_by_invocation"
#: ADK's replay skips these (``_rewind_utils._NON_SESSION_STATE_PREFIXES``)
_NON_SESSION = (State.APP_PREFIX, State.USER_PREFIX, State.TEMP_PREFIX)
#: the invocation id of the stand-in event that carries the replayed state (never a real one:
#: ADK's invocation ids are ``e-<uuid>``; a rewind before an invocation of this name is left to ADK)
STAND_IN = "rewindtui-replay-before"

_Key = tuple[str, str, str]


@dataclass
class Replay:
    """ADK's replay of the first ``position`` events (see the module)."""

    position: int = 0
    state: dict[str, Any] = field(default_factory=dict)
    cleared: dict[str, None] = field(default_factory=dict)  # an ordered set
    artifacts: dict[str, int] = field(default_factory=dict)
    #: (timestamp column value, id) of the last event replayed; None before the first
    last: tuple[Any, str] | None = None

    def copy(self) -> Replay:
        return Replay(self.position, dict(self.state), dict(self.cleared), dict(self.artifacts), self.last)

    def apply(self, ts: Any, event_id: str, event_data: dict[str, Any] | None) -> None:
        actions = (event_data or {}).get("actions") or {}
        for key, value in (actions.get("state_delta") or {}).items():
            if key.startswith(_NON_SESSION):
                continue
            if value is None:
                self.state.pop(key, None)
                self.cleared[key] = None
            else:
                self.state[key] = value
                self.cleared.pop(key, None)
        self.artifacts.update(actions.get("artifact_delta") or {})
        self.position += 1
        self.last = (ts, event_id)

    def fork_state(self) -> dict[str, Any]:
        """The session state a session holding these events has: ADK's ``append_event`` keeps a key
        set to ``None`` (``dict.update``), the replay for a rewind drops it."""
        return {**self.state, **dict.fromkeys(self.cleared)}


@dataclass(frozen=True)
class Point:
    """The rewind point: the first event of an invocation, and the replay of everything before it."""

    ts: Any
    event_id: str
    before: Replay
    #: artifact versions after every event of the session
    artifacts_now: dict[str, int]


@dataclass
class ReadCount:
    """Events read from the database (for the bounded-read test and the bench)."""

    events: int = 0


class RewindIndex:
    """Checkpoints of ADK's replay for the sessions of one ``DatabaseSessionService`` database."""

    def __init__(
        self, engine: AsyncEngine, events_table: Table, *, every: int = EVERY, write_lock: asyncio.Lock | None = None
    ) -> None:
        self.engine = engine
        #: held while writing (the session service's queue of writers); never while reading
        self.write_lock = write_lock or asyncio.Lock()
        self.events = events_table
        self.every = every
        self.reads = ReadCount()
        self.metadata = MetaData()
        ts_type = events_table.c.timestamp.type
        self.checkpoints = Table(
            CHECKPOINTS_TABLE,
            self.metadata,
            Column("app_name", String(128), primary_key=True),
            Column("user_id", String(128), primary_key=True),
            Column("session_id", String(128), primary_key=True),
            Column("position", Integer, primary_key=True, autoincrement=False),
            Column("event_ts", ts_type, nullable=False),
            Column("event_id", String(128), nullable=False),
            Column("state", Text, nullable=False),
            Column("cleared", Text, nullable=False),
            Column("artifacts", Text, nullable=False),
        )
        # the index is declared on a stand-in of ADK's table in this module's own metadata: ADK's
        # table (shared by every service in the process) is left as ADK made it
        names = ("app_name", "user_id", "session_id", "invocation_id")
        events_ddl = Table(events_table.name, self.metadata, *(Column(n, events_table.c[n].type) for n in names))
        self._by_invocation = Index(INVOCATION_INDEX, *(events_ddl.c[n] for n in names))
        self._ready = False
        #: bumped when a session's checkpoints are dropped: a replay read before must not write its own
        self._dropped: dict[_Key, int] = {}

    async def prepare(self) -> None:
        """Create the checkpoint table and the invocation index when missing (idempotent)."""
        if self._ready:
            return
        async with self.engine.begin() as conn:
            await conn.run_sync(self._create)
        self._ready = True

    def _create(self, sync_conn: Any) -> None:
        if sync_conn.dialect.name == "postgresql":
            # replicas on one database create these at once: PostgreSQL's "IF NOT EXISTS" is not safe
            # against a concurrent CREATE (a unique violation on pg_type), so one at a time, by a lock
            # held to the end of this transaction (the key: this table's name, hashed by PostgreSQL)
            sync_conn.execute(text("SELECT pg_advisory_xact_lock(hashtext('rewindtui_replay_checkpoints'))"))
        self.checkpoints.create(sync_conn, checkfirst=True)
        self._by_invocation.create(sync_conn, checkfirst=True)

    # -- reading -----------------------------------------------------------------------
    def _of(self, key: _Key, table: Table | None = None) -> Any:
        t = self.events if table is None else table
        app_name, user_id, session_id = key
        return and_(t.c.app_name == app_name, t.c.user_id == user_id, t.c.session_id == session_id)

    # The keyset bounds below repeat the timestamp alone (``timestamp >= ts AND (timestamp > ts OR
    # ...)``): with the ``OR`` only, SQLite cannot use ADK's (session, timestamp, id) index as a
    # range and walks every event of the session (EXPLAIN QUERY PLAN; 20,000 rows at 10,000 turns).
    def _after(self, last: tuple[Any, str] | None) -> Any:
        t = self.events
        if last is None:
            return True
        ts, event_id = last
        return and_(t.c.timestamp >= ts, or_(t.c.timestamp > ts, and_(t.c.timestamp == ts, t.c.id > event_id)))

    def _before(self, ts: Any, event_id: str) -> Any:
        t = self.events
        return and_(t.c.timestamp <= ts, or_(t.c.timestamp < ts, and_(t.c.timestamp == ts, t.c.id < event_id)))

    async def _first_of(self, conn: AsyncConnection, key: _Key, invocation_id: str) -> tuple[Any, str] | None:
        """The first event of the invocation in ADK's order. Its events are read whole (an
        invocation's few) and the first picked here: with ``ORDER BY timestamp, id LIMIT 1`` SQLite
        walks ADK's timestamp index over the whole session instead of :data:`INVOCATION_INDEX`."""
        t = self.events
        rows = (
            await conn.execute(select(t.c.timestamp, t.c.id).where(self._of(key), t.c.invocation_id == invocation_id))
        ).all()
        return min(((row[0], row[1]) for row in rows), default=None)

    async def _checkpoint(self, conn: AsyncConnection, key: _Key, before: tuple[Any, str] | None) -> Replay:
        """The newest checkpoint of ``key`` strictly before the event ``before`` (None: the newest
        of all); an empty replay when there is none."""
        c = self.checkpoints
        query = select(c).where(self._of(key, c))
        if before is not None:
            ts, event_id = before
            query = query.where(or_(c.c.event_ts < ts, and_(c.c.event_ts == ts, c.c.event_id < event_id)))
        row = (await conn.execute(query.order_by(c.c.position.desc()).limit(1))).mappings().first()
        if row is None:
            return Replay()
        return Replay(
            position=row["position"],
            state=json.loads(row["state"]),
            cleared=dict.fromkeys(json.loads(row["cleared"])),
            artifacts=json.loads(row["artifacts"]),
            last=(row["event_ts"], row["event_id"]),
        )

    async def _rows(
        self, conn: AsyncConnection, key: _Key, after: tuple[Any, str] | None, until: tuple[Any, str] | None
    ) -> AsyncIterator[tuple[Any, str, dict[str, Any] | None]]:
        """The events of ``key`` after ``after`` and before ``until`` (None: no bound), in ADK's order,
        in chunks (keyset pages: never the whole range in memory)."""
        t = self.events
        while True:
            query = select(t.c.timestamp, t.c.id, t.c.event_data).where(self._of(key), self._after(after))
            if until is not None:
                query = query.where(self._before(*until))
            rows = (await conn.execute(query.order_by(t.c.timestamp, t.c.id).limit(CHUNK))).all()
            self.reads.events += len(rows)
            for ts, event_id, data in rows:
                yield ts, event_id, data
            if len(rows) < CHUNK:
                return
            after = (rows[-1][0], rows[-1][1])

    async def _replay(
        self, conn: AsyncConnection, key: _Key, replay: Replay, until: tuple[Any, str] | None, new: list[Replay]
    ) -> Replay:
        """``replay`` carried on to just before ``until`` (None: to the end); a checkpoint due on
        the way is added to ``new``."""
        async for ts, event_id, data in self._rows(conn, key, replay.last, until):
            replay.apply(ts, event_id, data)
            if replay.position % self.every == 0:
                new.append(replay.copy())
        return replay

    async def point(self, key: _Key, invocation_id: str) -> Point:
        """The rewind point before ``invocation_id`` (InvocationNotFoundError when the session has no
        event of it), computed from the checkpoints; writes the ones it found missing."""
        await self.prepare()
        new: list[Replay] = []
        generation = self._dropped.get(key, 0)
        async with self.engine.connect() as conn:
            conn = await conn.execution_options(read_only=True)  # a plain BEGIN (adk_sessions._on_begin)
            first = await self._first_of(conn, key, invocation_id)
            if first is None:
                raise InvocationNotFoundError(f"Invocation ID not found: {invocation_id}")
            before = await self._replay(conn, key, await self._checkpoint(conn, key, first), first, new)
            # the rewind point's own events and everything after them: only their artifact
            # versions count, carried on from the newest checkpoint when it is past the point
            newest = await self._checkpoint(conn, key, None)
            start = newest if newest.position > before.position else before.copy()
            now = await self._replay(conn, key, start, None, new)
            await conn.rollback()
        if new:
            await self._write(key, new, generation)
        return Point(ts=first[0], event_id=first[1], before=before, artifacts_now=now.artifacts)

    async def extend(self, key: _Key) -> int:
        """Write the checkpoints due after the newest one, reading the events after it (all of them,
        streamed, for a session that has none yet); how many were written."""
        await self.prepare()
        new: list[Replay] = []
        generation = self._dropped.get(key, 0)
        async with self.engine.connect() as conn:
            conn = await conn.execution_options(read_only=True)
            await self._replay(conn, key, await self._checkpoint(conn, key, None), None, new)
            await conn.rollback()
        if new:
            await self._write(key, new, generation)
        return len(new)

    async def _write(self, key: _Key, replays: list[Replay], generation: int) -> None:
        app_name, user_id, session_id = key
        rows = []
        for r in replays:
            assert r.last is not None
            rows.append(
                {
                    "app_name": app_name,
                    "user_id": user_id,
                    "session_id": session_id,
                    "position": r.position,
                    "event_ts": r.last[0],
                    "event_id": r.last[1],
                    "state": json.dumps(r.state),
                    "cleared": json.dumps(list(r.cleared)),
                    "artifacts": json.dumps(r.artifacts),
                }
            )
        async with self.write_lock:
            if self._dropped.get(key, 0) != generation:
                return  # an event slotted in before them (or the session went) while they were read
            await self._write_rows(key, replays, rows)

    async def _write_rows(self, key: _Key, replays: list[Replay], rows: list[dict[str, Any]]) -> None:
        c = self.checkpoints
        async with self.engine.begin() as conn:
            # the same replay of the same events: a row already written by a concurrent reader is equal
            await conn.execute(delete(c).where(self._of(key, c), c.c.position.in_([r.position for r in replays])))
            await conn.execute(insert(c), rows)

    async def copy_checkpoints(self, conn: AsyncConnection, source: _Key, target: _Key, point: Point) -> None:
        """Give ``target`` (a fork holding ``source``'s events before ``point``, in the caller's
        transaction) the checkpoints of those events: ``source``'s up to the point, and the point."""
        c = self.checkpoints
        replaced = dict(zip(("app_name", "user_id", "session_id"), target, strict=True))
        columns = [literal(replaced[col.key]).label(col.key) if col.key in replaced else col for col in c.columns]
        rows = select(*columns).where(self._of(source, c), c.c.position < point.before.position)
        await conn.execute(insert(c).from_select([col.key for col in c.columns], rows))
        r = point.before
        if r.last is not None:
            await conn.execute(
                insert(c).values(
                    app_name=target[0],
                    user_id=target[1],
                    session_id=target[2],
                    position=r.position,
                    event_ts=r.last[0],
                    event_id=r.last[1],
                    state=json.dumps(r.state),
                    cleared=json.dumps(list(r.cleared)),
                    artifacts=json.dumps(r.artifacts),
                )
            )

    # -- keeping them true -------------------------------------------------------------
    async def invalidate_from(self, key: _Key, ts: Any) -> None:
        """Drop the checkpoints of ``key`` covering an event at ``ts`` or later (an event about to be
        stored at ``ts`` would slot in before them)."""
        await self.prepare()
        c = self.checkpoints
        async with self.write_lock, self.engine.begin() as conn:
            self._dropped[key] = self._dropped.get(key, 0) + 1
            await conn.execute(delete(c).where(self._of(key, c), c.c.event_ts >= ts))

    async def holds_from(self, key: _Key, ts: Any) -> bool:
        """Whether the session stores an event at ``ts`` or later (one look-up in ADK's index)."""
        query = select(literal(1)).where(self._of(key), self.events.c.timestamp >= ts).limit(1)
        async with self.engine.connect() as conn:
            conn = await conn.execution_options(read_only=True)
            return (await conn.execute(query)).first() is not None

    async def forget(self, key: _Key) -> None:
        """Drop every checkpoint of a deleted session (the caller holds the write lock)."""
        await self.prepare()
        c = self.checkpoints
        self._dropped[key] = self._dropped.get(key, 0) + 1
        async with self.engine.begin() as conn:
            await conn.execute(delete(c).where(self._of(key, c)))

    async def copy_rows_before(self, conn: AsyncConnection, source: _Key, target: _Key, point: Point) -> int:
        """Copy the stored rows of ``source``'s events before ``point`` into ``target`` (in the
        caller's transaction, ``INSERT ... SELECT``: no event passes through Python); their count."""
        t = self.events
        replaced = dict(zip(("app_name", "user_id", "session_id"), target, strict=True))
        columns = [literal(replaced[c.key]).label(c.key) if c.key in replaced else c for c in t.columns]
        rows = select(*columns).where(self._of(source), self._before(point.ts, point.event_id))
        result = await conn.execute(insert(t).from_select([c.key for c in t.columns], rows))
        return int(result.rowcount or 0)


RewindFn = Callable[..., Awaitable[None]]


def stand_in_events(point: Point, invocation_id: str) -> list[Event]:
    """Two events that ADK's rewind replays to exactly ``point``: the first carries the state and
    artifact versions before it, the second (of ``invocation_id``, the rewind point) the versions
    after every event (a superset: versions are only ever set, never removed)."""
    return [
        Event(
            invocation_id=STAND_IN,
            author="user",
            actions=EventActions(state_delta=dict(point.before.state), artifact_delta=dict(point.before.artifacts)),
        ),
        Event(
            invocation_id=invocation_id, author="user", actions=EventActions(artifact_delta=dict(point.artifacts_now))
        ),
    ]
