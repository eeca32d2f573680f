"""A session's stored ADK events copied into another session inside the database -- a fork's copy.

Used by :class:`~rewindtui.server.storage.adk_sessions.CachedDatabaseSessionService` (its ``fork`` and
``import_events``), which keeps its cache and write queue around these. Both copy ADK's own rows
over the event table's own columns with ``INSERT ... SELECT``, the session's key replaced: no event
passes through Python or is serialized again.

* :func:`write_fork`: the events before a rewind point (:class:`~.adk_rewind.Point`, from the replay
  checkpoints) and the checkpoints of those events, and the session state they leave.
* :func:`copy_event_rows`: the rows of given events (a fork made from the whole session).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC
from typing import Any

from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.sessions.session import Session
from sqlalchemy import func, insert, literal, select

from rewindtui.server.storage.adk_rewind import Point, RewindIndex

_Key = tuple[str, str, str]
_ID_CHUNK = 5000  # ids per statement (SQLite's bound-parameter limit is 32,766)


class NotDescribed(Exception):
    """The replay checkpoints do not describe the events a fork would copy (events stored out of
    time order): nothing is kept, and the fork is made from the whole session."""


async def write_fork(
    writer: Any, index: RewindIndex, source: _Key, target: _Key, point: Point, state: dict[str, Any]
) -> None:
    """In one transaction of ADK's own session factory (``writer``: ADK's service, its internals
    fenced in :mod:`rewindtui.server.shared.internals`): the session ``target`` (made, empty) gets
    the events of ``source`` before ``point``, their checkpoints, the session state ``state`` they
    leave, and the revision of its newest event. Raises :class:`NotDescribed` (nothing committed)
    where the checkpoints do not count the events copied."""
    async with writer.open_session() as sql:
        row = await sql.get(writer.storage_session, target)
        if row is None:
            raise SessionNotFoundError(f"Session {target[2]} not found.")
        if state:
            row.state.update(state)
        if point.before.last is not None:
            conn = await sql.connection()
            copied = await index.copy_rows_before(conn, source, target, point)
            if copied != point.before.position:  # the checkpoints do not describe these events
                raise NotDescribed(
                    f"fork: {copied} events before the point, the replay counted {point.before.position}"
                )
            await index.copy_checkpoints(conn, source, target, point)
            ts = point.before.last[0]  # the newest event copied (ADK's order)
            ts = ts if ts.tzinfo is not None else ts.replace(tzinfo=UTC)
            row.update_time = ts.replace(tzinfo=None) if writer.naive_datetime else ts
        await sql.commit()


async def copy_event_rows(sql: Any, table: Any, source: _Key, target: Session, events: Sequence[Event]) -> bool:
    """Copy the stored rows of ``events`` from the session ``source`` to ``target`` (same
    transaction); False, having written nothing, when ``source`` does not hold them all."""
    app_name, user_id, session_id = source
    of_source = (table.c.app_name == app_name, table.c.user_id == user_id, table.c.session_id == session_id)
    ids = [event.id for event in events]
    if len(set(ids)) != len(ids):
        return False
    chunks = [ids[i : i + _ID_CHUNK] for i in range(0, len(ids), _ID_CHUNK)]
    found = 0
    for chunk in chunks:
        found += (
            await sql.execute(select(func.count()).select_from(table).where(*of_source, table.c.id.in_(chunk)))
        ).scalar_one()
    if found != len(ids):
        return False
    replaced = {"app_name": target.app_name, "user_id": target.user_id, "session_id": target.id}
    columns = [literal(replaced[c.key]).label(c.key) if c.key in replaced else c for c in table.columns]
    for chunk in chunks:
        rows = select(*columns).where(*of_source, table.c.id.in_(chunk))
        await sql.execute(insert(table).from_select([c.key for c in table.columns], rows))
    return True
