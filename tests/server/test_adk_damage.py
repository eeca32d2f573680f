"""The row-by-row read of ADK's session database (server/storage/adk_damage.py) reads what ADK's
own ``get_session`` reads, for full and partial reads, with a damaged event as a placeholder in
its place; a read that fails for another reason fails as before. Real SQLite, ADK's own service."""

from __future__ import annotations

import asyncio
import sqlite3
import time
from pathlib import Path

import pytest
from google.adk.events.event import Event
from google.adk.sessions import DatabaseSessionService
from google.adk.sessions.base_session_service import GetSessionConfig
from google.genai import types

from rewindtui.server.storage.adk_damage import UNREADABLE_EVENT_KEY, DamagedAgentState
from rewindtui.server.storage.adk_sessions import CachedDatabaseSessionService, sqlite_url

APP, USER, SID = "app", "u", "s"


def _event(n: int, author: str, ts: float) -> Event:
    role = "user" if author == "user" else "model"
    return Event(
        author=author,
        invocation_id=f"inv-{n // 2}",
        timestamp=ts,
        content=types.Content(role=role, parts=[types.Part(text=f"text {n}")]),
    )


async def _written(db: Path) -> list[Event]:
    service = DatabaseSessionService(sqlite_url(str(db)))
    session = await service.create_session(app_name=APP, user_id=USER, session_id=SID, state={"k": 1})
    start = time.time()
    events = []
    for n in range(6):
        events.append(await service.append_event(session, _event(n, "user" if n % 2 == 0 else "agent", start + n)))
    await service.close()
    return events


CONFIGS = [None, GetSessionConfig(num_recent_events=3), GetSessionConfig(num_recent_events=0)]


@pytest.mark.parametrize("config", CONFIGS, ids=["full", "recent-3", "none"])
def test_a_damaged_event_reads_as_a_placeholder_in_full_and_partial_reads(tmp_path, config):
    async def run() -> None:
        db = tmp_path / "adk.db"
        events = await _written(db)
        damaged = events[3]
        with sqlite3.connect(db) as conn:
            conn.execute('UPDATE events SET event_data = \'{"content": {"par\' WHERE id = ?', (damaged.id,))
        conn.close()
        service = CachedDatabaseSessionService(sqlite_url(str(db)))
        try:
            session = await service.get_session(app_name=APP, user_id=USER, session_id=SID, config=config)
        finally:
            await service.close()
        assert session is not None and session.state == {"k": 1}
        expected = events if config is None else events[len(events) - (config.num_recent_events or 0) :]
        if config is not None and config.num_recent_events == 0:
            expected = []
        assert [e.id for e in session.events] == [e.id for e in expected]
        for got, want in zip(session.events, expected, strict=True):
            if got.id == damaged.id:
                assert got.custom_metadata[UNREADABLE_EVENT_KEY].startswith("its stored text is not JSON")
                assert got.invocation_id == want.invocation_id and got.author == "agent"
                assert "could not be read" in got.content.parts[0].text
            else:
                assert got.content == want.content and got.author == want.author

    asyncio.run(run())


def test_a_damaged_state_is_one_line_and_a_read_that_fails_otherwise_fails_as_before(tmp_path):
    async def run() -> None:
        db = tmp_path / "adk.db"
        await _written(db)
        with sqlite3.connect(db) as conn:
            conn.execute("UPDATE sessions SET state = '{not json' WHERE id = ?", (SID,))
        conn.close()
        service = CachedDatabaseSessionService(sqlite_url(str(db)))
        try:
            with pytest.raises(DamagedAgentState) as caught:
                await service.get_session(app_name=APP, user_id=USER, session_id=SID)
            text = str(caught.value)
            assert "\n" not in text and str(db) in text and "rewindtui repair --data-dir" in text
            with sqlite3.connect(db) as conn:
                conn.execute("UPDATE sessions SET state = '{}' WHERE id = ?", (SID,))
                conn.execute("DROP TABLE user_states")  # ADK's read fails, no row is damaged
            conn.close()
            with pytest.raises(Exception) as other:
                await service.get_session(app_name=APP, user_id=USER, session_id=SID)
            assert not isinstance(other.value, DamagedAgentState)
            assert "user_states" in str(other.value)
        finally:
            await service.close()

    asyncio.run(run())
