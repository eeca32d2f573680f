"""A turn at the end of a long session reads what it adds, not the session, and never a stale copy.

A 600-turn session (``bench/seed_turns.py``: the ADK events and store rows real turns leave) on the
embedded server, on SQLite and on a team server's PostgreSQL. Once a turn has read it (the server's
ADK session cache, ``storage/adk_sessions.py``), the next turns build no ADK ``Event`` from a stored
row (ADK's ``StorageEvent.to_event``, counted) and walk only the events they add in ADK's request
building (the memos of ``agent/contents_memo.py``, counted). An event written meanwhile by someone
else -- ADK's own ``DatabaseSessionService`` on the same database, as another process or replica
would -- is in the next turn's model request: the demo model's answer lists the user texts it saw.
Timings live in ``bench/bench_server_big.py``.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from google.adk.events.event import Event
from google.adk.sessions import DatabaseSessionService
from google.genai import types

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from srvkit import Turn

from conftest import server_options
from rewindtui.server import EmbeddedServer
from rewindtui.server.agent import contents_memo
from rewindtui.server.shared.internals import bulk_event_writer
from rewindtui.server.shared.paths import APP_NAME
from seed_turns import USER, seed_session

#: also on a team server's PostgreSQL (tests/server/conftest.py)
ENGINES = ("sqlite", "postgresql")
TURNS = 600
#: events a turn's request building may walk: the few it adds (the user's message, the answer),
#: times the walks ADK makes per turn -- never the session's 1,200
WALKED = 60

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


@pytest.fixture(scope="module")
def long(tmp_path_factory: pytest.TempPathFactory, engine: str) -> Iterator[EmbeddedServer]:
    with EmbeddedServer(tmp_path_factory.mktemp("long"), options=server_options(engine)) as srv:
        yield srv


def seeded(srv: EmbeddedServer) -> str:
    sid = f"long-{uuid.uuid4().hex[:8]}"
    srv.call(seed_session(srv.app.state.parts, sid, TURNS), timeout=600)
    return sid


class Built:
    """ADK ``Event`` objects made from stored rows from now on (``StorageEvent.to_event``)."""

    def __init__(self, srv: EmbeddedServer, monkeypatch: pytest.MonkeyPatch) -> None:
        writer = bulk_event_writer(srv.app.state.parts.session_service)
        assert writer is not None
        self.count = 0
        original = writer.storage_event.to_event

        def to_event(row: Any, *args: Any, **kwargs: Any) -> Event:
            self.count += 1
            return original(row, *args, **kwargs)

        monkeypatch.setattr(writer.storage_event, "to_event", to_event)


def walked() -> int:
    """Events ADK's request-building functions have walked so far (the memos' count)."""
    installed = contents_memo.install()
    memos = (installed.contents, installed.rewinds, installed.task_scope, installed.branch_events)
    assert all(m is not None for m in memos)
    return sum(m.stats.events_read for m in memos if m is not None)


def test_a_turn_at_the_end_of_a_long_session_reads_only_what_it_adds(long, make_a2a, monkeypatch) -> None:
    srv, a2a = long, make_a2a(long)
    sid = seeded(srv)
    built = Built(srv, monkeypatch)
    first = Turn(a2a.stream("the first turn reads the session", sid))
    assert f"turn {TURNS + 1};" in first.answer
    assert built.count >= 2 * TURNS  # it was read (and this counts what is read)
    for i in range(3):
        built.count, before = 0, walked()
        turn = Turn(a2a.stream(f"one more line {i}", sid))
        assert f"turn {TURNS + 2 + i};" in turn.answer and f"one more line {i}" in turn.answer
        assert built.count == 0, f"a turn built {built.count} events from stored rows"
        assert walked() - before <= WALKED, f"a turn's request walked {walked() - before} events"


def test_an_event_another_writer_stored_is_in_the_next_turn(long, make_a2a, engine_options) -> None:
    srv, a2a = long, make_a2a(long)
    sid = seeded(srv)
    Turn(a2a.stream("the server reads and keeps the session", sid))
    service = srv.app.state.parts.session_service
    url = service.db_engine.url.render_as_string(hide_password=False)
    sneaked = f"written beside the server {uuid.uuid4().hex[:6]}"

    async def write_beside() -> None:
        # ADK's own service on the same database: another process, or another replica
        other = DatabaseSessionService(url)
        try:
            session = await other.get_session(app_name=APP_NAME, user_id=USER, session_id=sid)
            assert session is not None
            content = types.Content(role="user", parts=[types.Part(text=sneaked)])
            await other.append_event(session, Event(invocation_id=f"e-{uuid.uuid4()}", author="user", content=content))
        finally:
            await other.close()

    srv.call(write_beside(), timeout=60)
    turn = Turn(a2a.stream("and what came before?", sid))
    # the demo model lists the newest user texts of its request: the one written beside is there
    assert sneaked in turn.answer, turn.answer
    assert f"turn {TURNS + 3};" in turn.answer
