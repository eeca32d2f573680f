"""A damaged row in ADK's session database degrades one event, never a session.

google-adk's ``DatabaseSessionService.get_session`` decodes every row of a session in one go: one
``events.event_data`` that is not UTF-8, not JSON, or not an event (a field of the wrong type or
missing), or a ``sessions.state`` that is not a JSON object, made every read of the session
raise -- and every send to it was refused with SQLAlchemy's text, SQL statement included.

:func:`read_session` is the read :class:`~.adk_sessions.CachedDatabaseSessionService` falls back
to when ADK's own fails: the same rows, each decoded on its own (``CAST(... AS BLOB)``, so bytes
that are not UTF-8 reach Python as bytes), and each event built by ADK's own
``StorageEvent.to_event``. An event that cannot be read becomes :func:`placeholder_event` -- its
id, invocation and time from their own columns, its author when still legible, and one text part
saying it could not be read and why -- and is logged; the session reads and takes new turns (the
model sees the placeholder's text where the event was).

A session whose *state* cannot be read cannot take a turn (ADK writes the state back with every
event that changes it): :class:`DamagedAgentState` says so in one line -- which session, which
file, why, and ``rewindtui repair`` (:mod:`.repair`), which rebuilds the state from the events.
Nothing is written here.
"""

from __future__ import annotations

import json
import logging
import re
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from google.adk.events.event import Event
from google.adk.sessions.base_session_service import GetSessionConfig
from google.adk.sessions.session import Session
from google.adk.sessions.state import State
from google.genai import types
from sqlalchemy import LargeBinary, cast, select

from rewindtui.server.shared.errors import Conflict
from rewindtui.server.shared.internals import BulkEventWriter

log = logging.getLogger(__name__)

#: metadata key (in ``custom_metadata``) marking a placeholder event
UNREADABLE_EVENT_KEY = "rewindtui_unreadable"
_NO_AUTHOR = "rewindtui"
_AUTHOR = re.compile(rb'"author"\s*:\s*"([A-Za-z0-9_.-]{1,100})"')


class DamagedAgentState(Conflict):
    """A session's state (or the app's or user's) in ADK's database cannot be read; ``str()`` is
    one line naming the session, the file, the reason and what to do. A service error (409): a
    turn, rewind or fork of the session answers it as it is."""

    def __init__(self, message: str, *, session_id: str, reason: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.reason = reason


def decode_json(raw: Any) -> tuple[Any, str | None]:
    """A stored JSON column as Python (PostgreSQL's JSONB arrives decoded), or the reason it is not."""
    if raw is None:
        return None, "it is empty (NULL)"
    if isinstance(raw, (dict, list)):
        return raw, None
    if isinstance(raw, memoryview):
        raw = raw.tobytes()
    if isinstance(raw, (bytes, bytearray)):
        try:
            text = bytes(raw).decode("utf-8")
        except UnicodeDecodeError as exc:
            return None, f"its stored text is not valid UTF-8 (at byte {exc.start} of {len(raw)})"
    else:
        text = str(raw)
    try:
        return json.loads(text), None
    except ValueError as exc:
        return None, f"its stored text is not JSON ({exc})"


def state_problem(raw: Any) -> tuple[dict[str, Any], str | None]:
    """A stored state column as a dict, or ({}, the reason it is not one)."""
    data, reason = decode_json(raw)
    if reason is not None:
        return {}, reason
    if not isinstance(data, dict):
        return {}, f"it is not a JSON object (a {type(data).__name__})"
    return data, None


def event_from_row(writer: BulkEventWriter, row: Any, key: tuple[str, str, str]) -> tuple[Event, str | None]:
    """The event of one ``events`` row (id, invocation_id, timestamp, raw event_data), by ADK's own
    ``to_event``; a placeholder and the reason when it cannot be read."""
    event_id, invocation_id, timestamp, raw = row
    data, reason = decode_json(raw)
    if reason is None and not isinstance(data, dict):
        reason = f"it is not a JSON object (a {type(data).__name__})"
    if reason is None:
        app_name, user_id, session_id = key
        stored = writer.storage_event(
            id=event_id,
            app_name=app_name,
            user_id=user_id,
            session_id=session_id,
            invocation_id=invocation_id,
            timestamp=timestamp,
            event_data=data,
        )
        try:
            return stored.to_event(), None
        except (ValueError, TypeError, AttributeError) as exc:  # pydantic's ValidationError is a ValueError
            reason = f"it is not an event ({_first_line(exc)})"
    return placeholder_event(event_id, invocation_id, timestamp, raw, reason), reason


def placeholder_event(event_id: Any, invocation_id: Any, timestamp: Any, raw: Any, reason: str) -> Event:
    """An event standing in for an unreadable stored one (what the model sees in its place)."""
    found = _AUTHOR.search(raw if isinstance(raw, (bytes, bytearray)) else str(raw or "").encode())
    author = found.group(1).decode() if found else _NO_AUTHOR
    text = f"(this event could not be read from the agent's session database: {reason}; event {event_id})"
    return Event(
        id=str(event_id),
        invocation_id=str(invocation_id or ""),
        author=author,
        timestamp=_epoch(timestamp),
        content=types.Content(role="user" if author == "user" else "model", parts=[types.Part(text=text)]),
        custom_metadata={UNREADABLE_EVENT_KEY: reason},
    )


async def read_session(
    writer: BulkEventWriter,
    *,
    app_name: str,
    user_id: str,
    session_id: str,
    config: GetSessionConfig | None,
    db_path: Path | None,
    sqlite: bool,
) -> Session | None:
    """ADK's ``get_session``, each row decoded on its own (see the module's text).
    :class:`DamagedAgentState` when a state cannot be read."""
    key = (app_name, user_id, session_id)
    S, E = writer.storage_session, writer.storage_event
    A, U = writer.storage_app_state, writer.storage_user_state

    def raw(column: Any) -> Any:
        return cast(column, LargeBinary) if sqlite else column

    async with writer.open_session() as sql:
        found = (
            await sql.execute(
                select(S.create_time, S.update_time, raw(S.state)).where(
                    S.app_name == app_name, S.user_id == user_id, S.id == session_id
                )
            )
        ).first()
        if found is None:
            return None
        create_time, update_time, raw_state = found
        events: list[Event] = []
        if not (config and config.num_recent_events == 0):
            stmt = select(E.id, E.invocation_id, E.timestamp, raw(E.event_data)).where(
                E.app_name == app_name, E.user_id == user_id, E.session_id == session_id
            )
            if config and config.after_timestamp:
                after = datetime.fromtimestamp(config.after_timestamp, UTC)
                stmt = stmt.where(E.timestamp >= (after.replace(tzinfo=None) if writer.naive_datetime else after))
            stmt = stmt.order_by(E.timestamp.desc(), E.id.desc())
            if config and config.num_recent_events is not None:
                stmt = stmt.limit(config.num_recent_events)
            for row in reversed((await sql.execute(stmt)).all()):
                event, reason = event_from_row(writer, row, key)
                if reason is not None:
                    log.warning(
                        "event %s of session %s in the agent's session database cannot be read: %s; "
                        "read as a placeholder",
                        row[0],
                        session_id,
                        reason,
                    )
                events.append(event)
            _agent_authors(
                events, whole=config is None or (not config.num_recent_events and not config.after_timestamp)
            )
        app_raw = (await sql.execute(select(raw(A.state)).where(A.app_name == app_name))).scalar_one_or_none()
        user_raw = (
            await sql.execute(select(raw(U.state)).where(U.app_name == app_name, U.user_id == user_id))
        ).scalar_one_or_none()
    where = db_path if db_path is not None else "the agent's session database"
    problems = []
    session_state, why = state_problem(raw_state)
    if why:
        problems.append(f"its state ({why})")
    app_state, why = state_problem(app_raw) if app_raw is not None else ({}, None)
    if why:
        problems.append(f"the app's shared state ({why})")
    user_state, why = state_problem(user_raw) if user_raw is not None else ({}, None)
    if why:
        problems.append(f"the user's shared state ({why})")
    if problems:
        reason = "; ".join(problems)
        raise DamagedAgentState(
            f"the agent's saved state of session {session_id!r} in {where} cannot be read: {reason}; "
            f"nothing was sent. Stop the server and run `rewindtui repair{_data_dir_flag(db_path)} {session_id}` "
            "to rebuild it "
            "from the session's events",
            session_id=session_id,
            reason=reason,
        )
    merged = dict(session_state)
    merged.update({State.APP_PREFIX + k: v for k, v in app_state.items()})
    merged.update({State.USER_PREFIX + k: v for k, v in user_state.items()})
    shell = S(app_name=app_name, user_id=user_id, id=session_id, create_time=create_time, update_time=update_time)
    session: Session = shell.to_session(state=merged, events=events)
    return session


def is_placeholder(event: Event) -> bool:
    """Whether ``event`` stands in for a stored one that could not be read."""
    return bool((event.custom_metadata or {}).get(UNREADABLE_EVENT_KEY))


def fill_missing_authors(session: Session) -> None:
    """An event stored without its author (ADK reads it as author ``""``, which the model would
    take for another agent's words) is read as the user's when its content is the user's, else
    as the agent's, and logged."""
    for event in session.events:
        if not event.author:
            log.warning(
                "event %s of session %s in the agent's session database has no author; read as the agent's",
                event.id,
                session.id,
            )
            event.author = "user" if event.content is not None and event.content.role == "user" else _NO_AUTHOR
            event.custom_metadata = {**(event.custom_metadata or {}), UNREADABLE_EVENT_KEY: "its author is missing"}
    _agent_authors(session.events)


def _agent_authors(events: list[Event], *, whole: bool = True) -> None:
    """A placeholder whose author could not be read is the user's when it opens a turn that has
    no user event, else it takes the agent's name from another event of its invocation, else of
    the session (so the model reads it as the user's or its own turn, not as another agent's).
    ``whole``: ``events`` are the whole session (a partial read may start inside a turn)."""
    for event in events:
        if event.author != _NO_AUTHOR or not (event.custom_metadata or {}).get(UNREADABLE_EVENT_KEY):
            continue
        invocation = [e for e in events if e.invocation_id == event.invocation_id]
        if whole and invocation[0] is event and not any(e.author == "user" for e in invocation):
            # a turn opens with the user's message: the first event of one that has none is it
            event.author = "user"
            if event.content is not None:
                event.content.role = "user"
            continue
        agents = [e for e in events if e.author not in ("user", _NO_AUTHOR)]
        same = [e.author for e in agents if e.invocation_id == event.invocation_id]
        event.author = (same or [e.author for e in agents] or [_NO_AUTHOR])[0]


def _data_dir_flag(db_path: Path | None) -> str:
    return f" --data-dir {db_path.parent}" if db_path is not None else ""


def _epoch(value: Any) -> float:
    if isinstance(value, datetime):
        return (value if value.tzinfo else value.replace(tzinfo=UTC)).timestamp()
    if isinstance(value, (int, float)):
        return float(value)
    try:
        parsed = datetime.fromisoformat(str(value))
    except ValueError:
        return 0.0
    return (parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)).timestamp()


def _first_line(exc: BaseException) -> str:
    errors = getattr(exc, "errors", None)
    if callable(errors):  # pydantic: the first field and what is wrong with it
        try:
            first = errors()[0]
            return f"{'.'.join(str(p) for p in first['loc']) or 'the event'}: {first['msg']}"[:200]
        except (IndexError, KeyError, TypeError):
            pass
    text = str(exc).strip().splitlines()
    return (text[0] if text else type(exc).__name__)[:200]
