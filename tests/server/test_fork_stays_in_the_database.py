"""A fork near the end of a long session copies its history inside the database: no message and no
ADK event of it passes through Python, on SQLite and on a team server's PostgreSQL.

A 600-turn session (``bench/seed_turns.py``: the ADK events and store rows real turns leave) on the
embedded server, forked before its last turn over REST. What the fork loads into Python is counted
where it would come in: the store's messages (``message_pairs``, the rows of the Python copy's
``INSERT``), the names of the user's sessions, and ADK's whole-session reads (``get_session``
without a bound: the fork that replays every event); each must be bounded, not 1,199 turns' worth.
And the fork holds what the Python copy would have written: every message of the effective history
before the point, moved to the fork, and ADK's events before the point. A message the SQL copy
cannot make byte for byte sends that fork through Python, with the Python copy's rows. Times live in
``bench/bench_fork_steps.py`` and ``bench/bench_server_big.py``.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))

from rewindtui.a2a import contract
from rewindtui.server import EmbeddedServer
from rewindtui.server.service.rewinds import _moved, moved_v1_text
from rewindtui.server.shared.paths import APP_NAME
from rewindtui.server.shared.wire import dumps
from rewindtui.server.storage.store_conn import Tx
from seed_turns import USER, seed_session

#: also on a team server's PostgreSQL (tests/server/conftest.py)
ENGINES = ("sqlite", "postgresql")
TURNS = 600
SID = "long"

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]


class Loaded:
    """Rows the fork brings into Python, counted where they come in."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, srv: EmbeddedServer) -> None:
        parts = srv.app.state.parts
        self.messages = 0  # store messages read, or written row by row
        self.whole_reads = 0  # ADK sessions read whole (every event)
        store, sessions = parts.store, parts.session_service
        pairs, get_session, execute = store.message_pairs, sessions.get_session, Tx.execute

        async def message_pairs(seqs: Any) -> Any:
            rows = await pairs(seqs)
            self.messages += len(rows)
            return rows

        async def whole(**kwargs: Any) -> Any:
            if kwargs.get("config") is None:
                self.whole_reads += 1
            return await get_session(**kwargs)

        async def counted(tx: Tx, statements: Any) -> None:
            statements = list(statements)
            self.messages += sum(1 for sql, _ in statements if sql.startswith("INSERT INTO messages"))
            await execute(tx, statements)

        monkeypatch.setattr(store, "message_pairs", message_pairs)
        monkeypatch.setattr(sessions, "get_session", whole)
        monkeypatch.setattr(Tx, "execute", counted)


def test_a_fork_near_the_end_copies_inside_the_database(long, http, monkeypatch) -> None:
    srv, invocations = long
    parts = srv.app.state.parts
    loaded = Loaded(monkeypatch, srv)
    resp = http.post(f"{srv.api_url}/sessions/{SID}/fork", json={contract.REST_BEFORE_FIELD: invocations[-1]})
    assert resp.status_code == 201, resp.text
    fork = resp.json()["data"]
    assert fork["name"].endswith(f"@ turn {TURNS}"), fork["name"]
    assert loaded.messages == 0, f"{loaded.messages} messages of the fork went through Python"
    assert loaded.whole_reads == 0, "the fork read the whole ADK session"
    monkeypatch.undo()

    # what the fork holds: the 1,199 turns before the point, each message moved to the fork
    rows = srv.call(
        parts.store._fetchall(
            "SELECT m.message_id, m.body, m.body_v1 FROM messages AS m WHERE m.session_id = ? ORDER BY m.seq",
            (fork["id"],),
        ),
        timeout=60,
    )
    source = srv.call(
        parts.store._fetchall(
            "SELECT message_id FROM messages WHERE session_id = ? ORDER BY seq LIMIT ?", (SID, 2 * (TURNS - 1))
        ),
        timeout=60,
    )
    assert [r[0] for r in rows] == [r[0] for r in source]
    for _, body, body_v1 in (rows[0], rows[-1]):
        assert json.loads(body)["contextId"] == fork["id"] == json.loads(body_v1)["contextId"]
        assert json.loads(body)["metadata"]["kagent_session_id"] == fork["id"]
    adk = srv.call(
        parts.session_service.get_session(app_name=APP_NAME, user_id=USER, session_id=fork["id"]), timeout=60
    )
    assert len(adk.events) == 2 * (TURNS - 1)
    assert adk.events[-1].invocation_id == invocations[-2]
    assert http.delete(f"{srv.api_url}/sessions/{fork['id']}").status_code == 200


def test_a_message_that_does_not_fit_sends_the_fork_through_python(long, http, monkeypatch) -> None:
    """One message whose 1.0 text holds the session's id twice cannot be copied in SQL: the store's
    transaction is rolled back and the fork copies every message through Python -- the same rows the
    Python copy makes, nothing of the rolled-back attempt left."""
    srv, _ = long
    parts, sid = srv.app.state.parts, "odd"
    invocations = srv.call(seed_session(parts, sid, 4), timeout=120)
    seq, body_v1 = srv.call(
        parts.store._fetchone("SELECT seq, body_v1 FROM messages WHERE session_id = ? ORDER BY seq LIMIT 1", (sid,)),
        timeout=30,
    )
    data = json.loads(body_v1)
    data["metadata"]["echo"] = {"contextId": sid}  # the session id a second time, as "contextId": "odd"
    odd_v1 = json.dumps(data, ensure_ascii=False)  # a2a-sdk's rendering (wire.v1_dumps)

    async def damage() -> None:
        async with parts.store.transaction() as tx:
            await tx.execute([("UPDATE messages SET body_v1 = ? WHERE seq = ?", (odd_v1, seq))])

    srv.call(damage(), timeout=30)
    sources = srv.call(
        parts.store._fetchall("SELECT body, body_v1 FROM messages WHERE session_id = ? ORDER BY seq LIMIT 6", (sid,)),
        timeout=30,
    )
    assert not srv.call(parts.store.fork_copy_fits([seq]), timeout=30)
    loaded = Loaded(monkeypatch, srv)
    resp = http.post(f"{srv.api_url}/sessions/{sid}/fork", json={contract.REST_BEFORE_FIELD: invocations[-1]})
    assert resp.status_code == 201, resp.text
    fork = resp.json()["data"]
    assert loaded.messages > 0  # the Python copy ran
    monkeypatch.undo()
    task_id = srv.call(
        parts.store._fetchone("SELECT id FROM tasks WHERE session_id = ? AND kind = 'fork'", (fork["id"],)), timeout=30
    )[0]
    copied = srv.call(
        parts.store._fetchall("SELECT body, body_v1 FROM messages WHERE session_id = ? ORDER BY seq", (fork["id"],)),
        timeout=30,
    )
    expected = [
        (dumps(_moved(json.loads(body), fork["id"], task_id)), moved_v1_text(v1, fork["id"], task_id))
        for body, v1 in sources
    ]
    assert copied == expected
    assert json.loads(copied[0][1])["metadata"]["echo"] == {"contextId": sid}  # the second one kept as it was
    assert http.delete(f"{srv.api_url}/sessions/{fork['id']}").status_code == 200
