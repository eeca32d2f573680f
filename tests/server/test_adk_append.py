"""The turn's fast paths do what the slow ones do.

The direct append (server/adk_append.py) stores exactly what ADK's own ``append_event`` stores.

Real ADK turns (the demo agent through ``Runner.run_async``, a ``Runner.rewind_async``) go
through the server's session service; then the same events are appended one by one through a
plain ``DatabaseSessionService`` into a second database. Every stored row must be the same,
byte for byte, and ADK's own ``get_session`` must read back the same session from both.
"""

from __future__ import annotations

import asyncio
import sqlite3
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from google.adk.errors.session_not_found_error import SessionNotFoundError
from google.adk.events.event import Event
from google.adk.runners import Runner
from google.adk.sessions import DatabaseSessionService
from google.adk.sessions.database_session_service import StaleSessionError
from google.genai import types
from google.protobuf import timestamp_pb2
from hypothesis import given
from hypothesis import strategies as st

from rewindtui.server.agent.agent import build_agent
from rewindtui.server.shared.errors import is_storage_failure
from rewindtui.server.shared.internals import update_marker
from rewindtui.server.shared.wire import set_timestamp
from rewindtui.server.storage import adk_sessions
from rewindtui.server.storage.adk_sessions import CachedDatabaseSessionService, sqlite_url

APP, USER, SID = "app", "u", "s"


def _rows(db: Path, sql: str) -> list[tuple[Any, ...]]:
    conn = sqlite3.connect(db)
    try:
        with conn:  # commits a change
            return conn.execute(sql).fetchall()
    finally:
        conn.close()


def _spy(monkeypatch: pytest.MonkeyPatch) -> list[bool]:
    """What each stored (non-partial) append did: True direct, False left to ADK."""
    taken: list[bool] = []
    original = CachedDatabaseSessionService._append_direct

    async def spy(self: CachedDatabaseSessionService, session: Any, event: Event) -> bool:
        taken.append(await original(self, session, event))
        return taken[-1]

    monkeypatch.setattr(CachedDatabaseSessionService, "_append_direct", spy)
    return taken


def _message(text: str) -> types.Content:
    return types.Content(role="user", parts=[types.Part(text=text)])


def _event(invocation: str, text: str) -> Event:
    return Event(invocation_id=invocation, author="user", content=_message(text))


async def _turns_through_the_server_service(db: Path) -> None:
    """Turns (one calling a tool that writes state) and a rewind, as the server runs them."""
    svc = CachedDatabaseSessionService(sqlite_url(str(db)))
    runner = Runner(app_name=APP, agent=build_agent(), session_service=svc)
    try:
        await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
        invocations: list[str] = []
        for text in ("hello", "what is the weather in Oslo", "third"):
            async for event in runner.run_async(
                user_id=USER, session_id=SID, new_message=_message(text), yield_user_message=True
            ):
                if event.author == "user":
                    invocations.append(event.invocation_id)
        await runner.rewind_async(user_id=USER, session_id=SID, rewind_before_invocation_id=invocations[1])
        async for _ in runner.run_async(user_id=USER, session_id=SID, new_message=_message("after the rewind")):
            pass
    finally:
        await svc.close()


async def _replayed_through_adk(source: Path, target: Path) -> None:
    """The events stored in ``source``, appended one by one by ADK's own service into ``target``."""
    reader = DatabaseSessionService(sqlite_url(str(source)))
    writer = DatabaseSessionService(sqlite_url(str(target)))
    try:
        stored = await reader.get_session(app_name=APP, user_id=USER, session_id=SID)
        assert stored is not None
        session = await writer.create_session(app_name=APP, user_id=USER, session_id=SID)
        for event in stored.events:
            await writer.append_event(session, event.model_copy(deep=True))
    finally:
        await reader.close()
        await writer.close()


async def _read_back(db: Path) -> Any:
    svc = DatabaseSessionService(sqlite_url(str(db)))
    try:
        return await svc.get_session(app_name=APP, user_id=USER, session_id=SID)
    finally:
        await svc.close()


def test_direct_append_stores_what_adk_stores(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ours, adks = tmp_path / "ours.db", tmp_path / "adk.db"
    taken = _spy(monkeypatch)
    asyncio.run(_turns_through_the_server_service(ours))
    # the plain events went the direct way; the ones carrying state (the tool's, the rewind's) ADK's
    assert taken.count(True) >= 8 and False in taken, taken
    asyncio.run(_replayed_through_adk(ours, adks))

    every_event = "SELECT * FROM events ORDER BY timestamp, id"
    assert _rows(ours, every_event) == _rows(adks, every_event)
    assert len(_rows(ours, every_event)) == len(taken)
    # the session row: the same state and update_time (only its creation time differs)
    session_row = "SELECT app_name, user_id, id, state, update_time FROM sessions"
    assert _rows(ours, session_row) == _rows(adks, session_row)
    for table in ("app_states", "user_states"):
        assert _rows(ours, f"SELECT state FROM {table}") == _rows(adks, f"SELECT state FROM {table}")

    mine, theirs = asyncio.run(_read_back(ours)), asyncio.run(_read_back(adks))
    assert [e.model_dump() for e in mine.events] == [e.model_dump() for e in theirs.events]
    assert mine.state == theirs.state and not mine.state.get("weather_calls")  # the rewind undid the tool's call
    assert mine.last_update_time == theirs.last_update_time


def test_a_stale_writer_is_refused_as_adk_refuses(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Two copies of one session: the second to append is at an old revision -- ADK's
    StaleSessionError, nothing written; the up-to-date copy goes on appending directly."""
    db = tmp_path / "adk.db"
    taken = _spy(monkeypatch)

    async def run() -> None:
        svc = CachedDatabaseSessionService(sqlite_url(str(db)))
        try:
            await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
            first = await svc.get_session(app_name=APP, user_id=USER, session_id=SID)
            second = await svc.get_session(app_name=APP, user_id=USER, session_id=SID)
            assert first is not None and second is not None
            await svc.append_event(first, _event("e-1", "first"))
            with pytest.raises(StaleSessionError):
                await svc.append_event(second, _event("e-2", "stale"))
            await svc.append_event(first, _event("e-3", "first again"))
        finally:
            await svc.close()

    asyncio.run(run())
    assert taken == [True, False, True]  # the stale one: refused by the UPDATE, then by ADK
    assert [row[0] for row in _rows(db, "SELECT invocation_id FROM events ORDER BY timestamp")] == ["e-1", "e-3"]


def test_a_missing_state_row_is_left_to_adk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """ADK's append checks the user's state row exists; the direct one leaves such a case to it:
    the same error as a plain ``DatabaseSessionService`` gives, nothing written."""
    errors: dict[str, type[BaseException]] = {}
    taken = _spy(monkeypatch)

    async def run(name: str, service: type[DatabaseSessionService]) -> None:
        db = tmp_path / f"{name}.db"
        svc = service(sqlite_url(str(db)))
        try:
            session = await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
            _rows(db, "DELETE FROM user_states")
            try:
                await svc.append_event(session, _event("e-1", "hello"))
            except (SessionNotFoundError, ValueError, RuntimeError) as exc:
                errors[name] = type(exc)
        finally:
            await svc.close()
        assert _rows(db, "SELECT count(*) FROM events") == [(0,)]

    asyncio.run(run("adk", DatabaseSessionService))
    asyncio.run(run("ours", CachedDatabaseSessionService))
    assert taken == [False]
    assert "adk" in errors and errors["ours"] is errors["adk"]


def test_without_the_revision_marker_every_event_goes_through_adk(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An ADK whose ``Session`` has no revision marker (internals.py): ADK's append, same rows."""
    monkeypatch.setattr(adk_sessions, "has_update_marker", lambda: False)
    taken = _spy(monkeypatch)
    db = tmp_path / "adk.db"

    async def run() -> None:
        svc = CachedDatabaseSessionService(sqlite_url(str(db)))
        try:
            session = await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
            for i in range(3):
                await svc.append_event(session, _event(f"e-{i}", f"m{i}"))
        finally:
            await svc.close()

    asyncio.run(run())
    assert taken == [False, False, False]
    assert len(asyncio.run(_read_back(db)).events) == 3


def test_a_created_session_is_cached_as_adk_reads_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The session ``create_session`` returns is cached: the first turn does not read it back.
    It equals ADK's own full read, revision included (so the first append goes direct)."""
    taken = _spy(monkeypatch)

    async def run() -> None:
        svc = CachedDatabaseSessionService(sqlite_url(str(tmp_path / "adk.db")))
        try:
            await svc.create_session(app_name=APP, user_id=USER, session_id=SID, state={"n": 1})
            assert svc.is_cached(APP, USER, SID)
            cached = await svc.get_session(app_name=APP, user_id=USER, session_id=SID)
            read = await DatabaseSessionService.get_session(svc, app_name=APP, user_id=USER, session_id=SID)
            assert cached is not None and read is not None
            assert cached.model_dump() == read.model_dump()
            assert update_marker(cached) == update_marker(read) is not None
            await svc.append_event(cached, _event("e-1", "hello"))
            # shared state set at creation changes what every cached session holds: the cache is dropped
            await svc.create_session(app_name=APP, user_id=USER, session_id="other", state={"user:x": 1})
            assert not svc.is_cached(APP, USER, SID) and not svc.is_cached(APP, USER, "other")
        finally:
            await svc.close()

    asyncio.run(run())
    assert taken == [True]


@given(
    st.datetimes(min_value=datetime(1, 1, 1), max_value=datetime(9999, 12, 31)),
    st.sampled_from(["%Y-%m-%dT%H:%M:%S.%fZ", "%Y-%m-%dT%H:%M:%SZ", "%Y-%m-%dT%H:%M:%S.%f+00:00", "%Y-%m-%d"]),
)
def test_status_timestamps_are_what_protobuf_parses(moment: datetime, layout: str) -> None:
    """``wire.set_timestamp`` (the stream's status timestamps) equals ``Timestamp.FromJsonString``."""
    text = moment.strftime(layout)
    theirs = timestamp_pb2.Timestamp()
    try:
        theirs.FromJsonString(text)
    except ValueError:
        with pytest.raises(ValueError):
            set_timestamp(timestamp_pb2.Timestamp(), text)
        return
    ours = timestamp_pb2.Timestamp()
    set_timestamp(ours, text)
    assert (ours.seconds, ours.nanos) == (theirs.seconds, theirs.nanos)


def test_a_failed_direct_write_leaves_nothing_half_written(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The event row cannot be written (its id is taken): the session row's revision is rolled
    back with it, the caller's session is unchanged, the cache dropped; a storage failure as the
    turn runner classifies it, as ADK's own append gives for the same event."""
    taken = _spy(monkeypatch)
    db = tmp_path / "adk.db"
    revision = "SELECT update_time FROM sessions"

    async def run() -> tuple[BaseException, BaseException]:
        svc = CachedDatabaseSessionService(sqlite_url(str(db)))
        try:
            session = await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
            first = _event("e-1", "hello")
            await svc.append_event(session, first)
            before = _rows(db, revision)
            again = _event("e-2", "same id")
            again.id, again.timestamp = first.id, first.timestamp + 1
            with pytest.raises(sqlite3.IntegrityError) as ours:
                await svc.append_event(session, again)
            assert _rows(db, revision) == before
            assert [e.id for e in session.events] == [first.id]
            assert not svc.is_cached(APP, USER, SID)
            with pytest.raises(Exception) as adks:  # ADK's own append of the same event
                await DatabaseSessionService.append_event(svc, session, again.model_copy())
            return ours.value, adks.value
        finally:
            await svc.close()

    ours, adks = asyncio.run(run())
    assert taken == [True]  # the second raised inside the direct write (sqlite3's own error, unwrapped)
    assert is_storage_failure(ours) and is_storage_failure(adks)
    assert isinstance(getattr(adks, "orig", None), type(ours))
    assert _rows(db, "SELECT count(*) FROM events") == [(1,)]
