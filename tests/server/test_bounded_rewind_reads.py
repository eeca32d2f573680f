"""Rewind, redo and fork near the end of a long session read what they touch, not the session.

A 1,200-turn session (``bench/seed_turns.py``: the ADK events and store rows real turns leave) on
the embedded server, on SQLite and on a team server's PostgreSQL. Once the session has been read
(the first rewind reads the store's task log whole, as the server does after a start), a turn
and a rewind before it, its redo, and a fork before the last turn each read at most a few rows of
the store's task log (``LogCache.reads``: tasks and messages read) and at most one checkpoint
interval of ADK events (``RewindIndex.reads``); and the log they read still answers what a log
read whole answers. Timings live in ``bench/bench_server_big.py``.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from google.adk.events._rewind_events import _apply_rewinds

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
from srvkit import Turn

from rewindtui.a2a import contract
from rewindtui.server import EmbeddedServer
from rewindtui.server.shared.paths import APP_NAME
from seed_turns import USER

#: also on a team server's PostgreSQL (tests/server/conftest.py)
ENGINES = ("sqlite", "postgresql")
TURNS = 1200
SID = "long"
#: the log rows one operation near the end may read: the turns, rewinds and redos since the last
#: read (each a task and at most a few messages), never the 1,200 turns before
ROWS = 12
#: the stored history one rewind or redo may read (the links of the rewinds under it) and write (its
#: own link): a few numbers each, where a whole list is 2,400 message numbers (over 10,000 bytes)
HISTORY_READ = 3
HISTORY_BYTES = 400

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


class Reads:
    """Rows read from now on: the store's task log (tasks, messages, whole reads) and ADK's events."""

    def __init__(self, srv: EmbeddedServer) -> None:
        parts = srv.app.state.parts
        self.log = parts.store.log_cache.reads
        self.index = srv.call(parts.session_service.rewind_index(), timeout=30)
        assert self.index is not None
        self.start = self.now()
        self.srv, self.store = srv, parts.store
        self.histories = (self.log.histories, self.log.history_bytes)

    def now(self) -> tuple[int, int, int, int]:
        return (self.log.tasks, self.log.messages, self.log.full, self.index.reads.events)

    def history(self) -> tuple[int, int, int]:
        """Stored histories read since the last call (rows, bytes), and the length of the one the
        newest rewind (or redo) task of the session stores (what it wrote)."""
        rows, size = self.log.histories - self.histories[0], self.log.history_bytes - self.histories[1]
        self.histories = (self.log.histories, self.log.history_bytes)
        written = self.srv.call(
            self.store._fetchone(
                "SELECT history_refs FROM tasks WHERE session_id = ? AND kind IN ('rewind', 'redo') "
                "ORDER BY seq DESC LIMIT 1",
                (SID,),
            ),
            timeout=30,
        )
        return rows, size, len(written[0]) if written else 0

    def bounded_history(self) -> None:
        rows, size, written = self.history()
        assert rows <= HISTORY_READ and size <= HISTORY_BYTES, (rows, size)
        assert 0 < written <= HISTORY_BYTES, written

    def since(self) -> tuple[int, int, int, int]:
        now = self.now()
        out = tuple(b - a for a, b in zip(self.start, now, strict=True))
        self.start = now
        return out  # type: ignore[return-value]


def post(http: Any, srv: EmbeddedServer, path: str, body: dict[str, Any]) -> dict[str, Any]:
    resp = http.post(f"{srv.api_url}/sessions/{SID}/{path}", json=body)
    assert resp.status_code in (200, 201), resp.text
    return dict(resp.json()["data"])


def test_rewind_redo_and_fork_near_the_end_read_a_bounded_number_of_rows(long, make_a2a, http) -> None:
    srv, invocations = long
    a2a = make_a2a(srv)
    reads = Reads(srv)
    # the first read of the session's log is whole (a server just started has none cached)
    post(http, srv, "rewind", {contract.REST_BEFORE_FIELD: invocations[-1]})
    tasks, messages, full, _ = reads.since()
    assert full == 1 and tasks >= TURNS and messages >= 2 * TURNS
    reads.bounded_history()  # the first rewind of the session too: its history is a link, not a list
    post(http, srv, "redo", {})
    tasks, messages, full, _ = reads.since()
    assert full == 0 and tasks + messages <= ROWS, (tasks, messages, full)  # the rewind's task, no more
    reads.bounded_history()

    for round_ in range(3):
        turn = Turn(a2a.stream(f"one more {round_}", SID))
        reads.since()
        post(http, srv, "rewind", {contract.REST_BEFORE_FIELD: turn.invocation_id, "history_length": 20})
        tasks, messages, full, events = reads.since()
        assert full == 0, "the rewind read the whole task log"
        assert tasks + messages <= ROWS, (tasks, messages)
        assert events <= srv.app.state.parts.session_service.rewind_every + 10, events
        reads.bounded_history()
        post(http, srv, "redo", {"history_length": 20})
        tasks, messages, full, events = reads.since()
        assert full == 0 and tasks + messages <= ROWS, (tasks, messages, full)
        assert events <= srv.app.state.parts.session_service.rewind_every + 10, events
        reads.bounded_history()

    fork = post(http, srv, "fork", {contract.REST_BEFORE_FIELD: invocations[-1]})
    tasks, messages, full, events = reads.since()
    assert full == 0 and tasks + messages <= ROWS, (tasks, messages, full)
    # the interval before the point, and the events after it (the three rounds: 12 events, 4 each)
    assert events <= srv.app.state.parts.session_service.rewind_every + 2 + 12 + 10, events
    assert http.delete(f"{srv.api_url}/sessions/{fork['id']}").status_code == 200

    # the log kept in step answers as one read whole
    store = srv.app.state.parts.store

    async def kept() -> list[str]:
        log = await store._read_refs(await store.session_log(SID, lazy=True))
        return list(log.current_invocations())

    cached = srv.call(kept(), timeout=60)
    assert reads.since()[2] == 0  # from the kept log
    whole = srv.call(store.session_log(SID), timeout=60)  # not lazy: read whole, every history
    assert cached == whole.current_invocations() == srv.call(store.session_invocations(SID), timeout=60)
    adk = srv.call(
        srv.app.state.parts.session_service.get_session(app_name=APP_NAME, user_id=USER, session_id=SID), timeout=60
    )
    assert cached == list(dict.fromkeys(e.invocation_id for e in _apply_rewinds(adk.events) if e.content))
