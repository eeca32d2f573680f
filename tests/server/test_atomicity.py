"""Rewind, fork and turns keep ADK's session database and the task store in step.

The two are separate SQLite files; each piece of work that writes both is journaled (see
``rewinds.py`` / ``recovery.py``). Here the server is stopped between the two writes -- by a
held lock, an injected write failure, a full or read-only database, and ``kill -9`` of a real
``rewindtui serve`` process at a named checkpoint -- and afterwards both sides must agree
(``Recovery.check``: the invocations of the effective history are the same on both sides),
the model must see what the store shows, and nothing stored may be lost.
"""

from __future__ import annotations

import ast
import os
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

import httpx
import pytest
from srvkit import A2A, Api, Served, Turn, texts, wait_for_file

from rewindtui.server import EmbeddedServer
from rewindtui.server.http.options import PAUSE_ENV, ServerOptions
from rewindtui.server.storage.store import Tx

POSIX = sys.platform != "win32"
SID = "atomic"


def seen_by_model(answer: str) -> list[str]:
    """The user texts the demo model saw, from its answer ``You said: … (turn N; history: [...]; …)``."""
    return ast.literal_eval(answer.split("history: ", 1)[1].rsplit("; weather_calls", 1)[0])


def check(srv: EmbeddedServer, session_id: str = SID, user: str = "local") -> list[str]:
    return srv.call(srv.app.state.parts.service.recovery.check(session_id, user), timeout=30)


def startup_report(srv: EmbeddedServer) -> Any:
    return srv.app.state.parts.service.recovery.startup_report


def adk_rows(data_dir: Path, table: str, session_id: str | None = None) -> int:
    with sqlite3.connect(data_dir / "adk_sessions.db") as db:
        if session_id is None:
            return db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
        column = "id" if table == "sessions" else "session_id"
        return db.execute(f"SELECT COUNT(*) FROM {table} WHERE {column} = ?", (session_id,)).fetchone()[0]


def stored_message_ids(api: Api, session_id: str = SID) -> set[str]:
    return {m["messageId"] for t in api.tasks(session_id, include_rewound=True) for m in t.get("history", [])}


def in_background(fn: Any) -> threading.Thread:
    def run() -> None:
        try:
            fn()
        except httpx.HTTPError:  # the server is killed under it
            pass

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def three_turns(a2a: A2A, session_id: str = SID) -> list[Turn]:
    return [Turn(a2a.stream(text, session_id)) for text in ("one", "two", "three")]


# -- kill -9 of a real `rewindtui serve` between the two writes ------------------------------
@pytest.mark.slow
@pytest.mark.skipif(not POSIX, reason="uses SIGKILL")
def test_kill_9_mid_rewind_then_restart(tmp_path: Path, http: httpx.Client) -> None:
    data, marker = tmp_path / "d", tmp_path / "paused"
    served = Served(data, env={PAUSE_ENV: f"rewind.after_agent={marker}"})
    try:
        turns = three_turns(A2A(http, served.agent_url, "0.3"))
        everything = stored_message_ids(Api(http, served.api_url))
        body = {"rewind_before_invocation_id": turns[1].invocation_id}
        in_background(lambda: httpx.post(f"{served.api_url}/sessions/{SID}/rewind", json=body, timeout=60))
        wait_for_file(marker)  # ADK has committed the rewind event; the store has not been touched
        events_before_kill = adk_rows(data, "events", SID)
        served.kill9()
    finally:
        served.close()
    assert events_before_kill == 7  # 3 turns (user + answer) + the rewind event

    with EmbeddedServer(data) as srv:
        report = startup_report(srv)
        assert (report.intents_completed, report.intents_dropped, report.problems) == (1, 0, [])
        api = Api(http, srv.api_url)
        # the journal completed the rewind in the store: the view is the agent's
        assert api.merged_ids(SID) == turns[0].message_ids
        assert stored_message_ids(api) == everything  # nothing stored was lost (rewound, kept)
        assert check(srv) == []
        after = Turn(A2A(http, srv.agent_url, "1.0").stream("four", SID))
        assert seen_by_model(after.answer) == ["one", "four"]
        assert check(srv) == []


@pytest.mark.slow
@pytest.mark.skipif(not POSIX, reason="uses SIGKILL")
def test_kill_9_mid_turn_then_restart(tmp_path: Path, http: httpx.Client) -> None:
    data, marker = tmp_path / "d", tmp_path / "paused"
    served = Served(data, env={PAUSE_ENV: f"turn.after_agent_message={marker}"})
    try:
        a2a = A2A(http, served.agent_url, "0.3")
        body = a2a.rpc("message/stream", "", {"message": a2a.message("interrupted", SID, message_id="m-cut")})
        in_background(lambda: httpx.post(served.agent_url, json=body, timeout=60))
        wait_for_file(marker)  # ADK has the turn's answer; the store only its task and user message
        served.kill9()
    finally:
        served.close()

    with EmbeddedServer(data) as srv:
        report = startup_report(srv)
        assert (report.turns_failed, report.messages_restored, report.problems) == (1, 1, [])
        api = Api(http, srv.api_url)
        (task,) = api.tasks(SID)
        assert task["status"]["state"] == "failed"
        assert "stopped before this turn finished" in texts(task["status"]["message"])
        user, answer = task["history"]  # the answer ADK committed is restored into the store
        assert user["messageId"] == "m-cut" and user["metadata"]["kagent_invocation_id"].startswith("e-")
        assert texts(answer).startswith("You said: interrupted")
        assert check(srv) == []
        after = Turn(A2A(http, srv.agent_url, "1.0").stream("next", SID))
        assert seen_by_model(after.answer) == ["interrupted", "next"]


@pytest.mark.slow
@pytest.mark.skipif(not POSIX, reason="uses SIGKILL")
def test_kill_9_mid_fork_then_restart(tmp_path: Path, http: httpx.Client) -> None:
    data, marker = tmp_path / "d", tmp_path / "paused"
    served = Served(data, env={PAUSE_ENV: f"fork.after_agent={marker}"})
    try:
        turns = three_turns(A2A(http, served.agent_url, "0.3"))
        sessions_before = adk_rows(data, "sessions")
        body = {"rewind_before_invocation_id": turns[2].invocation_id}
        in_background(lambda: httpx.post(f"{served.api_url}/sessions/{SID}/fork", json=body, timeout=60))
        wait_for_file(marker)
        assert adk_rows(data, "sessions") == sessions_before + 1  # the fork's ADK session exists
        served.kill9()
    finally:
        served.close()

    with EmbeddedServer(data) as srv:
        report = startup_report(srv)
        assert (report.intents_completed, report.intents_dropped, report.problems) == (0, 1, [])
        api = Api(http, srv.api_url)
        assert [s["id"] for s in api.get("/sessions").json()["data"]] == [SID]  # no half fork
        assert adk_rows(data, "sessions") == sessions_before  # its ADK session is gone too
        assert check(srv) == []


# -- A lock held by another process ----------------------------------------------------------
def test_held_store_lock_refuses_cleanly(tmp_path: Path, http: httpx.Client) -> None:
    data = tmp_path / "d"
    with EmbeddedServer(data, options=ServerOptions(busy_timeout_ms=100)) as srv:
        a2a, api = A2A(http, srv.agent_url, "0.3"), Api(http, srv.api_url)
        turns = three_turns(a2a)
        before = (api.get(f"/sessions/{SID}/tasks", params={"include_rewound": "true"}).text, adk_rows(data, "events"))
        holder = sqlite3.connect(data / "rewindtui.db", isolation_level=None)
        holder.execute("BEGIN IMMEDIATE")  # another process writes the store and does not let go
        try:
            refused = api.post(f"/sessions/{SID}/rewind", {"rewind_before_invocation_id": turns[1].invocation_id})
            assert refused.status_code == 503 and "locked by another process" in refused.json()["error"]
            (status,) = a2a.rewind(SID, turns[1].invocation_id)
            assert status["status"]["state"] == "failed" and "locked" in texts(status["status"]["message"])
            events = a2a.stream("a turn meanwhile", SID)
            assert events[-1]["status"]["state"] == "failed" and "locked" in texts(events[-1]["status"]["message"])
            forked = api.post(f"/sessions/{SID}/fork", {"rewind_before_invocation_id": turns[1].invocation_id})
            assert forked.status_code == 503
        finally:
            holder.execute("ROLLBACK")
            holder.close()
        after = (api.get(f"/sessions/{SID}/tasks", params={"include_rewound": "true"}).text, adk_rows(data, "events"))
        assert after == before  # neither side changed
        assert adk_rows(data, "sessions") == 1
        assert check(srv) == []
        ok = api.post(f"/sessions/{SID}/rewind", {"rewind_before_invocation_id": turns[1].invocation_id})
        assert ok.status_code == 200 and api.merged_ids(SID) == turns[0].message_ids
        assert check(srv) == []


# -- A store write that fails after ADK committed ----------------------------------------------
class FailOnce:
    """Make the first store transaction that writes a rewind (or fork) task fail like a full disk."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, kind: str) -> None:
        self.fired = False
        original = Tx.execute

        def writes_task(sql: str, params: Any) -> bool:
            return sql.startswith("INSERT INTO tasks") and kind in params

        async def execute(tx: Tx, statements: Any) -> None:
            statements = list(statements)
            if not self.fired and any(writes_task(sql, params) for sql, params in statements):
                self.fired = True
                raise sqlite3.OperationalError("database or disk is full")
            await original(tx, statements)

        monkeypatch.setattr(Tx, "execute", execute)


@pytest.mark.parametrize("then", ["next request", "restart"])
def test_store_failure_after_the_agent_rewound(tmp_path: Path, http: httpx.Client, monkeypatch, then: str) -> None:
    data = tmp_path / "d"
    with EmbeddedServer(data) as srv:
        a2a, api = A2A(http, srv.agent_url, "0.3"), Api(http, srv.api_url)
        turns = three_turns(a2a)
        everything = stored_message_ids(api)
        failure = FailOnce(monkeypatch, "rewind")
        resp = api.post(f"/sessions/{SID}/rewind", {"rewind_before_invocation_id": turns[1].invocation_id})
        assert failure.fired and resp.status_code == 503
        assert "the agent has rewound and the store will follow" in resp.json()["error"]
        assert api.merged_ids(SID) != turns[0].message_ids  # the store has not caught up yet...
        if then == "next request":
            # ...and the session's next job finishes the rewind first
            after = Turn(a2a.stream("four", SID))
            assert seen_by_model(after.answer) == ["one", "four"]
            assert api.merged_ids(SID) == turns[0].message_ids + after.message_ids
            assert check(srv) == []
    if then == "restart":
        with EmbeddedServer(data) as srv:  # ...or startup does
            assert startup_report(srv).intents_completed == 1 and startup_report(srv).problems == []
            api = Api(http, srv.api_url)
            assert api.merged_ids(SID) == turns[0].message_ids
            assert stored_message_ids(api) == everything
            assert check(srv) == []


def test_store_failure_after_the_fork_was_written(tmp_path: Path, http: httpx.Client, monkeypatch) -> None:
    data = tmp_path / "d"
    with EmbeddedServer(data) as srv:
        api = Api(http, srv.api_url)
        turns = three_turns(A2A(http, srv.agent_url, "0.3"))
        sessions = adk_rows(data, "sessions")
        failure = FailOnce(monkeypatch, "fork")
        resp = api.post(f"/sessions/{SID}/fork", {"rewind_before_invocation_id": turns[2].invocation_id})
        assert failure.fired and resp.status_code == 507 and "full" in resp.json()["error"]
        assert adk_rows(data, "sessions") == sessions  # the fork was undone in ADK
        assert [s["id"] for s in api.get("/sessions").json()["data"]] == [SID]
        assert check(srv) == []


# -- A full or read-only database -------------------------------------------------------------
def _pragma(srv: EmbeddedServer, sql: str) -> None:
    """Fault injection: a PRAGMA on the store's writer connection."""
    store = srv.app.state.parts.store

    def run(conn: sqlite3.Connection) -> None:
        size = conn.execute("PRAGMA page_count").fetchone()[0]
        conn.execute(sql.format(pages=size))

    srv.call(store._writer.run(run), timeout=30)


@pytest.mark.parametrize(
    "fault, undo, needle, code",
    [
        ("PRAGMA max_page_count={pages}", "PRAGMA max_page_count=1073741823", "data directory is full", "storage_full"),
        ("PRAGMA query_only=ON", "PRAGMA query_only=OFF", "read-only", "storage_unavailable"),
    ],
)
def test_full_or_read_only_store(tmp_path: Path, http: httpx.Client, fault: str, undo: str, needle: str, code: str):
    data = tmp_path / "d"
    big = "x" * 1_000_000  # a 1 MB message
    with EmbeddedServer(data) as srv:
        a2a, api = A2A(http, srv.agent_url, "1.0"), Api(http, srv.api_url)
        turns = three_turns(a2a)
        before = (api.get(f"/sessions/{SID}/tasks", params={"include_rewound": "true"}).text, adk_rows(data, "events"))
        _pragma(srv, fault)
        events = a2a.stream(big, SID)
        assert len(events) == 1 and events[0]["status"]["state"] == "failed"
        assert needle in texts(events[0]["status"]["message"]) and events[0]["metadata"]["rewindtui_error"] == code
        if "query_only" in fault:  # a full database may still take a small write; a read-only one none
            (refused,) = a2a.rewind(SID, turns[1].invocation_id)
            assert needle in texts(refused["status"]["message"])
        after = (api.get(f"/sessions/{SID}/tasks", params={"include_rewound": "true"}).text, adk_rows(data, "events"))
        assert after == before and check(srv) == []  # nothing lost, nothing half written
        _pragma(srv, undo)
        turn = Turn(a2a.stream(big, SID))
        assert turn.final["status"]["state"] == "completed"
        assert texts(api.tasks(SID)[-1]["history"][0]) == big
        assert check(srv) == []


@pytest.mark.skipif(not POSIX or os.geteuid() == 0, reason="root writes to read-only directories")
def test_read_only_data_dir_at_start(tmp_path: Path) -> None:
    import subprocess

    data = tmp_path / "ro"
    data.mkdir()
    data.chmod(0o500)
    try:
        proc = subprocess.run(
            [sys.executable, "-m", "rewindtui.server.process.serve", "--data-dir", str(data)],
            capture_output=True,
            text=True,
            timeout=120,
        )
    finally:
        data.chmod(0o700)
    assert proc.returncode == 1 and proc.stdout == ""
    assert f"cannot write to the data directory {data}" in proc.stderr and "Traceback" not in proc.stderr


# -- The check itself ----------------------------------------------------------------------------
def test_check_sees_a_difference(tmp_path: Path, http: httpx.Client) -> None:
    data = tmp_path / "d"
    with EmbeddedServer(data) as srv:
        turns = three_turns(A2A(http, srv.agent_url, "0.3"))
        assert check(srv) == []
        with sqlite3.connect(data / "rewindtui.db") as db:  # lose the last turn's rows behind its back
            db.execute("DELETE FROM messages WHERE invocation_id = ?", (turns[2].invocation_id,))
        (problem,) = check(srv)
        assert turns[2].invocation_id in problem and "differs" in problem


def test_two_rewinds_at_once(tmp_path: Path, http: httpx.Client) -> None:
    data = tmp_path / "d"
    with EmbeddedServer(data) as srv:
        turns = three_turns(A2A(http, srv.agent_url, "0.3"))
        results: list[int] = []
        targets = [turns[1].invocation_id, turns[1].invocation_id]
        barrier = threading.Barrier(2)

        def rewind(target: str) -> None:
            barrier.wait()
            body = {"rewind_before_invocation_id": target}
            results.append(httpx.post(f"{srv.api_url}/sessions/{SID}/rewind", json=body, timeout=60).status_code)

        threads = [threading.Thread(target=rewind, args=(t,)) for t in targets]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(60)
        # one rewinds; the other is refused (busy while it runs, or its target is rewound by then)
        assert sorted(results)[0] == 200 and sorted(results)[1] in (400, 409)
        api = Api(http, srv.api_url)
        assert api.merged_ids(SID) == turns[0].message_ids
        assert (
            len([t for t in api.tasks(SID, include_rewound=True) if t["metadata"].get("rewindtui_effective_history")])
            == 1
        )
        assert check(srv) == []


def test_a_failed_delete_changes_nothing_and_stays_undone(tmp_path: Path, http: httpx.Client, monkeypatch) -> None:
    """ADK refuses the delete: the store keeps the session, and no journal entry deletes it later."""
    data = tmp_path / "d"
    with EmbeddedServer(data) as srv:
        api = Api(http, srv.api_url)
        three_turns(A2A(http, srv.agent_url, "0.3"))
        session_service = srv.app.state.parts.session_service

        async def refuse(**kw: Any) -> None:
            raise sqlite3.OperationalError("disk I/O error")

        monkeypatch.setattr(session_service, "delete_session", refuse)
        refused = api.delete(f"/sessions/{SID}")
        assert refused.status_code == 503 and "could not delete the session" in refused.json()["error"]
        monkeypatch.undo()
        assert [s["id"] for s in api.get("/sessions").json()["data"]] == [SID]
        assert check(srv) == []
    with EmbeddedServer(data) as srv:
        assert startup_report(srv).intents_completed == 0
        assert [s["id"] for s in Api(http, srv.api_url).get("/sessions").json()["data"]] == [SID]
        assert Api(http, srv.api_url).delete(f"/sessions/{SID}").status_code == 200
        assert Api(http, srv.api_url).get("/sessions").json()["data"] == [] and adk_rows(data, "sessions") == 0
