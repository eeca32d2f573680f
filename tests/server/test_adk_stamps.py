"""The ADK session cache's check, read on the event loop (``server/storage/adk_stamps.py``).

The plain sqlite3 read of the three revisions answers what SQLAlchemy's read of the same statement
answers, for any stored update times (hypothesis, real SQLite, ADK's own tables and column types);
a database another connection holds locked makes it fail at once (it never holds the event loop),
and where it fails the check reads through SQLAlchemy as before; and a session another writer
changed (its events, the app's or the user's state) is read again, not served from the cache.
"""

from __future__ import annotations

import asyncio
import sqlite3
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.events.event_actions import EventActions
from google.adk.sessions import DatabaseSessionService
from google.genai import types
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sqlalchemy import update

from rewindtui.server.shared.internals import bulk_event_writer
from rewindtui.server.storage import adk_stamps
from rewindtui.server.storage.adk_sessions import CachedDatabaseSessionService, sqlite_url
from rewindtui.server.storage.adk_stamps import StampReader, stamps_query

APP, USER, SID = "app", "u", "s"

moments = st.datetimes(min_value=datetime(1970, 1, 2), max_value=datetime(9999, 12, 31))


def _event(invocation: str, text: str, delta: dict[str, Any] | None = None) -> Event:
    content = types.Content(role="user", parts=[types.Part(text=text)])
    return Event(
        invocation_id=invocation, author="user", content=content, actions=EventActions(state_delta=delta or {})
    )


async def _append_and_read_back(url: str) -> None:
    """A session created, one event appended, the session read again (its cache checked)."""
    svc = CachedDatabaseSessionService(url)
    try:
        session = await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
        await svc.append_event(session, _event("e-1", "hello"))
        again = await svc.get_session(app_name=APP, user_id=USER, session_id=SID)
        assert again is not None and [e.invocation_id for e in again.events] == ["e-1"]
    finally:
        await svc.close()


async def _both(svc: CachedDatabaseSessionService, key: tuple[str, str, str]) -> tuple[Any, Any]:
    """(the plain read, SQLAlchemy's read of the same statement) of ``key``."""
    writer = bulk_event_writer(svc)
    assert writer is not None and svc.db_path is not None
    reader = StampReader(svc.db_path, writer, svc.db_engine.dialect)
    try:
        plain = reader.read(*key)
    finally:
        reader.close()
    async with svc.db_engine.connect() as conn:
        row = (await conn.execute(stamps_query(writer, *key))).first()
    return plain, (tuple(row) if row is not None else None)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    session_time=moments,
    app_time=st.one_of(st.none(), moments),
    user_time=st.one_of(st.none(), moments),
    user=st.sampled_from([USER, "üser 'x'", ""]),
)
def test_the_plain_read_answers_what_sqlalchemy_answers(
    session_time: datetime, app_time: datetime | None, user_time: datetime | None, user: str
) -> None:
    """Any update times, stored as ADK's column types store them; state rows present or not; a
    session that does not exist."""

    async def run(db: Path) -> None:
        svc = CachedDatabaseSessionService(sqlite_url(str(db)))
        try:
            await svc.create_session(app_name=APP, user_id=user, session_id=SID)
            writer = bulk_event_writer(svc)
            assert writer is not None
            sessions = writer.storage_session.__table__
            apps = writer.storage_app_state.__table__
            users = writer.storage_user_state.__table__
            async with svc.db_engine.begin() as conn:
                await conn.execute(update(sessions).values(update_time=session_time))
                for table, moment in ((apps, app_time), (users, user_time)):
                    if moment is None:
                        await conn.execute(table.delete())
                    else:
                        await conn.execute(update(table).values(update_time=moment))
            plain, theirs = await _both(svc, (APP, user, SID))
            assert plain == theirs
            assert plain is not None and plain[0] == session_time
            assert [type(v) for v in plain] == [type(v) for v in theirs]
            assert await _both(svc, (APP, user, "no such session")) == (None, None)
        finally:
            await svc.close()

    with tempfile.TemporaryDirectory() as tmp:
        asyncio.run(run(Path(tmp) / "adk.db"))


def test_turns_check_the_cache_on_the_loop(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A cached session's check is the plain read, not SQLAlchemy's (the point of the module)."""
    reads: list[Any] = []
    original = StampReader.read

    def spy(self: StampReader, *key: str) -> Any:
        reads.append(original(self, *key))
        return reads[-1]

    monkeypatch.setattr(StampReader, "read", spy)
    monkeypatch.setattr(adk_stamps.StampsCheck, "read_waiting", lambda *_: pytest.fail("read through SQLAlchemy"))

    asyncio.run(_append_and_read_back(sqlite_url(str(tmp_path / "adk.db"))))
    assert reads and all(r is not None for r in reads)


def test_a_locked_database_fails_the_plain_read_at_once(tmp_path: Path) -> None:
    """Another connection holds the database in exclusive locking mode: the plain read raises at
    once instead of waiting (sqlite3's default would wait 5 s, holding the event loop)."""
    db = tmp_path / "adk.db"

    async def make() -> tuple[Any, Any]:
        svc = CachedDatabaseSessionService(sqlite_url(str(db)))
        try:
            await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
            return bulk_event_writer(svc), svc.db_engine.dialect
        finally:
            await svc.close()

    writer, dialect = asyncio.run(make())
    reader = StampReader(db, writer, dialect)
    assert reader.read(APP, USER, SID) is not None
    reader.close()
    blocker = sqlite3.connect(db, isolation_level=None)
    try:
        blocker.execute("PRAGMA locking_mode=EXCLUSIVE")
        blocker.execute("BEGIN EXCLUSIVE")
        start = time.perf_counter()
        with pytest.raises(sqlite3.OperationalError, match="locked"):
            reader.read(APP, USER, SID)
        assert time.perf_counter() - start < 0.5
        blocker.execute("COMMIT")
    finally:
        blocker.close()
    try:
        assert reader.read(APP, USER, SID) is not None  # the lock gone, the same reader reads
    finally:
        reader.close()


def test_a_check_leaves_no_read_open(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Between checks the reader holds no read snapshot: a checkpoint that must wait for every
    reader (``TRUNCATE``) completes right after one, with the reader still open."""
    db = tmp_path / "adk.db"
    reads: list[Any] = []
    closes: list[Any] = []
    read, close = StampReader.read, StampReader.close
    monkeypatch.setattr(StampReader, "read", lambda self, *key: reads.append(read(self, *key)) or reads[-1])
    monkeypatch.setattr(StampReader, "close", lambda self: closes.append(self) or close(self))

    async def run() -> None:
        svc = CachedDatabaseSessionService(sqlite_url(str(db)))
        try:
            session = await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
            for i in range(3):
                await svc.append_event(session, _event(f"e-{i}", "hello"))
                again = await svc.get_session(app_name=APP, user_id=USER, session_id=SID)
                assert again is not None
                session = again
            assert any(r is not None for r in reads) and not closes  # it read on the loop, it is open
            other = sqlite3.connect(db, isolation_level=None)
            try:
                busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                other.close()
            assert busy == 0
        finally:
            await svc.close()

    asyncio.run(run())


@pytest.mark.parametrize("beside", [False, True])
def test_when_the_plain_read_fails_the_check_reads_through_sqlalchemy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, beside: bool
) -> None:
    """Fault injection: the plain read raises as SQLite does under a lock. The check reads through
    SQLAlchemy: the cached session when nobody else wrote, a fresh read when ADK's own service
    (as another process would) appended an event."""
    db = tmp_path / "adk.db"
    failed: list[tuple[str, ...]] = []

    def locked(self: StampReader, *key: str) -> Any:
        failed.append(key)
        raise sqlite3.OperationalError("database is locked")

    async def run() -> None:
        svc = CachedDatabaseSessionService(sqlite_url(str(db)))
        other = DatabaseSessionService(sqlite_url(str(db)))
        try:
            session = await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
            await svc.append_event(session, _event("e-1", "hello"))
            if beside:
                theirs = await other.get_session(app_name=APP, user_id=USER, session_id=SID)
                assert theirs is not None
                await other.append_event(theirs, _event("e-2", "beside"))
            monkeypatch.setattr(StampReader, "read", locked)
            again = await svc.get_session(app_name=APP, user_id=USER, session_id=SID)
            assert again is not None
            assert [e.invocation_id for e in again.events] == (["e-1", "e-2"] if beside else ["e-1"])
            assert svc.is_cached(APP, USER, SID)
        finally:
            await other.close()
            await svc.close()

    asyncio.run(run())
    assert failed and failed[0] == (APP, USER, SID)


@pytest.mark.parametrize("change", ["event", "app state", "user state"])
def test_what_another_writer_changed_is_read_again(tmp_path: Path, change: str) -> None:
    """ADK's own service on the same database (another process would do the same) appends an event,
    or changes the app's or the user's state: the next read answers it, not the cached copy."""
    db = tmp_path / "adk.db"

    async def run() -> None:
        svc = CachedDatabaseSessionService(sqlite_url(str(db)))
        other = DatabaseSessionService(sqlite_url(str(db)))
        try:
            session = await svc.create_session(app_name=APP, user_id=USER, session_id=SID)
            await svc.append_event(session, _event("e-1", "hello"))
            assert svc.is_cached(APP, USER, SID)
            if change == "event":
                theirs = await other.get_session(app_name=APP, user_id=USER, session_id=SID)
                assert theirs is not None
                await other.append_event(theirs, _event("e-2", "beside"))
            else:
                # the shared state through another session of the same app (and user): the cached
                # session's own row is untouched
                key = "app:n" if change == "app state" else "user:n"
                await other.create_session(app_name=APP, user_id=USER, session_id="elsewhere", state={key: 7})
            again = await svc.get_session(app_name=APP, user_id=USER, session_id=SID)
            assert again is not None
            if change == "event":
                assert [e.invocation_id for e in again.events] == ["e-1", "e-2"]
            else:
                assert again.state.get("app:n" if change == "app state" else "user:n") == 7
        finally:
            await other.close()
            await svc.close()

    asyncio.run(run())


def test_not_on_a_sqlite_file_there_is_no_plain_read(monkeypatch: pytest.MonkeyPatch) -> None:
    """An in-memory database: the check reads through SQLAlchemy (no file for a second connection)."""
    monkeypatch.setattr(adk_stamps.StampReader, "read", lambda *_: pytest.fail("read on the loop"))

    asyncio.run(_append_and_read_back("sqlite+aiosqlite:///:memory:"))
