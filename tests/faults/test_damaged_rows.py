"""Issue 30, items 1-3: every kind of damage in every store degrades one item, never a session;
the two stores are checked against each other at start; a cut write-ahead log is never silent.

Real embedded servers (``rewindtui serve`` processes for kill -9) on real SQLite files; the
damage is done with sqlite3 between runs (:mod:`damage`)."""

from __future__ import annotations

import asyncio
import json
import logging
import sqlite3
import sys
from pathlib import Path

import httpx
import pytest
from damage import KINDS, damage_event, damage_message, damage_state, damage_task

from kit.servers import connected_chat, session_on_disk
from rewindtui.base.tls import default_context
from rewindtui.chat import TurnRefused
from rewindtui.server import EmbeddedServer

pytestmark = [pytest.mark.timeout(120), pytest.mark.slow]

POSIX = sys.platform != "win32"


def _rest_tasks(srv: EmbeddedServer, sid: str) -> list[dict]:
    headers = {"Authorization": f"Bearer {srv.token}"} if srv.token else {}
    resp = httpx.get(
        f"{srv.api_url}/sessions/{sid}/tasks",
        headers={**headers, "X-User-Id": "local"},
        timeout=30,
        verify=default_context(),
    )
    assert resp.status_code == 200, resp.text[:300]
    return json.loads(resp.text)["data"]  # a body that is not JSON fails here


async def _read_and_send(srv: EmbeddedServer, sid: str) -> tuple[str, str, list[str]]:
    """What the session shows, its answer to a new turn, and ListTasks' task ids."""
    chat = await connected_chat(srv)
    try:
        await chat.open(sid)
        shown = "\n".join(i.text for i in chat.conversation.items)
        listed = await chat.client.list_tasks(sid)
        await chat.send("fourth words")
        answer = chat.conversation.items[-1].text
    finally:
        await chat.client.aclose()
    return shown, answer, [t["id"] for t in listed.tasks]


@pytest.mark.parametrize("kind", KINDS)
async def test_a_damaged_message_is_one_placeholder(tmp_path, caplog, kind):
    sid = await session_on_disk(tmp_path, "first words", "second words", "third words")
    seq = damage_message(tmp_path, "You said: second words", kind)
    caplog.set_level(logging.WARNING)
    with EmbeddedServer(tmp_path) as srv:
        tasks = _rest_tasks(srv, sid)
        shown, answer, listed = await _read_and_send(srv, sid)
    texts = [p.get("text", "") for t in tasks for m in t["history"] for p in m["parts"]]
    assert sum("could not be read from the store" in t for t in texts) == 1, texts
    assert "first words" in shown and "third words" in shown and "could not be read from the store" in shown
    assert len(listed) == 3
    assert "fourth words" in answer
    assert any(f"stored message {seq} cannot be read" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_damaged_task_is_one_placeholder(tmp_path, kind):
    sid = await session_on_disk(tmp_path, "first words", "second words", "third words")
    task_id = damage_task(tmp_path, "second words", kind)
    with EmbeddedServer(tmp_path) as srv:
        tasks = _rest_tasks(srv, sid)
        shown, answer, listed = await _read_and_send(srv, sid)
    damaged = [t for t in tasks if t["id"] == task_id]
    assert damaged and damaged[0]["metadata"]["rewindtui_unreadable"]
    assert all("rewindtui_unreadable" not in (t.get("metadata") or {}) for t in tasks if t["id"] != task_id)
    assert "second words" in shown and "this turn's stored task could not be read" in shown
    assert task_id in listed and "fourth words" in answer


@pytest.mark.parametrize("kind", KINDS)
async def test_a_damaged_adk_event_is_one_placeholder_and_the_session_goes_on(tmp_path, caplog, kind):
    """The agent's answer to turn 2 is damaged in adk_sessions.db: the history reads (it is the
    task store's), the model still sees turns 1-3's user words, and the next turn is answered."""
    sid = await session_on_disk(tmp_path, "first words", "second words", "third words")
    damage_event(tmp_path, "You said: second words", kind)
    caplog.set_level(logging.WARNING)
    with EmbeddedServer(tmp_path) as srv:
        shown, answer, _ = await _read_and_send(srv, sid)
    assert "first words" in shown and "third words" in shown
    # the demo model's answer lists the user words it saw: all four, nothing else
    assert "history: ['first words', 'second words', 'third words', 'fourth words']" in answer, answer
    assert "SELECT" not in answer
    if kind != "missing":  # a missing author is read as the agent's (logged), the event kept
        assert any("cannot be read" in r.getMessage() and "placeholder" in r.getMessage() for r in caplog.records)
    else:
        assert any("has no author" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("kind", KINDS)
async def test_a_damaged_adk_state_is_said_in_one_line_and_repair_rebuilds_it(tmp_path, kind, capsys):
    from rewindtui.cli.main import main as cli_main

    sid = await session_on_disk(tmp_path, "first words", "second words")
    damage_state(tmp_path, sid, kind)
    with EmbeddedServer(tmp_path) as srv:
        chat = await connected_chat(srv)
        try:
            await chat.open(sid)
            shown = "\n".join(i.text for i in chat.conversation.items)
            with pytest.raises(TurnRefused) as refused:
                await chat.send("third words")
        finally:
            await chat.client.aclose()
        first = _rest_tasks(srv, sid)[0]["metadata"]["kagent_invocation_id"]
        rewind = httpx.post(
            f"{srv.api_url}/sessions/{sid}/rewind",
            json={"rewind_before_invocation_id": first},
            headers={"X-User-Id": "local"},
            timeout=60,
        )
    assert rewind.status_code == 409 and f"rewindtui repair --data-dir {tmp_path} {sid}" in rewind.json()["error"]
    text = str(refused.value)
    assert "second words" in shown
    assert (
        f"rewindtui repair --data-dir {tmp_path} {sid}" in text
        and "adk_sessions.db" in text
        and "nothing was sent" in text
    )
    assert "SELECT" not in text and "sqlalchemy" not in text.lower() and "\n" not in text
    assert _count(tmp_path / "rewindtui.db", "tasks") == 2  # nothing stored

    capsys.readouterr()
    assert await asyncio.to_thread(cli_main, ["repair", "--data-dir", str(tmp_path)]) == 0
    said = capsys.readouterr().out
    assert f"session {sid!r}: its state in" in said and "rebuilt from its" in said, said
    kept = list(tmp_path.glob("repaired-*/adk_sessions-state-*.txt"))
    assert len(kept) == 1
    with EmbeddedServer(tmp_path) as srv:
        _, answer, _ = await _read_and_send(srv, sid)
    assert "history: ['first words', 'second words', 'fourth words']" in answer, answer


def _count(db: Path, table: str) -> int:
    with sqlite3.connect(db) as conn:
        n = int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    conn.close()
    return n


# -- the two stores against each other ---------------------------------------------------------
def _drop_turn_from_adk(data_dir: Path, words: str) -> None:
    """The agent's database loses one turn's events (as a cut write-ahead log loses its last commits)."""
    with sqlite3.connect(data_dir / "adk_sessions.db") as conn:
        (inv,) = conn.execute(
            "SELECT invocation_id FROM events WHERE event_data LIKE ? LIMIT 1", (f"%{words}%",)
        ).fetchone()
        conn.execute("DELETE FROM events WHERE invocation_id = ?", (inv,))
    conn.close()


async def test_a_turn_the_agent_lacks_is_said_at_start_and_on_send_then_repaired(tmp_path, caplog, capsys):
    from rewindtui.cli.main import main as cli_main

    sid = await session_on_disk(tmp_path, "first words", "second words", "third words")
    _drop_turn_from_adk(tmp_path, "third words")
    caplog.set_level(logging.WARNING)
    with EmbeddedServer(tmp_path) as srv:
        chat = await connected_chat(srv)
        try:
            await chat.open(sid)
            with pytest.raises(TurnRefused) as refused:
                await chat.send("fourth words")
        finally:
            await chat.client.aclose()
    said = [r.getMessage() for r in caplog.records if "the two stores disagree" in r.getMessage()]
    assert len(said) == 1, said
    assert f"session {sid!r}" in said[0] and "turn 3 ('third words')" in said[0]
    assert str(tmp_path / "adk_sessions.db") in said[0] and f"rewindtui repair --data-dir {tmp_path} {sid}" in said[0]
    assert "turn 3 ('third words')" in str(refused.value) and "nothing was sent" in str(refused.value)

    capsys.readouterr()
    assert await asyncio.to_thread(cli_main, ["repair", "--data-dir", str(tmp_path), sid]) == 0
    out = capsys.readouterr().out
    assert "rewound the view to before turn 3 ('third words')" in out, out
    caplog.clear()
    with EmbeddedServer(tmp_path) as srv:
        shown, answer, _ = await _read_and_send(srv, sid)
    assert not [r for r in caplog.records if "the two stores disagree" in r.getMessage()]
    assert "history: ['first words', 'second words', 'fourth words']" in answer, answer


def test_repair_refuses_while_a_server_serves(tmp_path, capsys):
    from rewindtui.cli.main import main as cli_main

    with EmbeddedServer(tmp_path):
        assert cli_main(["repair", "--data-dir", str(tmp_path)]) == 1
    err = capsys.readouterr().err
    assert "in use by a running server" in err and "nothing was changed" in err


@pytest.mark.skipif(not POSIX, reason="uses SIGKILL")
def test_cut_write_ahead_logs_after_kill_9_are_never_silent(tmp_path):
    """Three turns; kill -9; both -wal files cut to half; start again: the stores agree, or the
    start says which turns differ and a send says so too (never a view of turns the agent lacks)."""
    sys.path.insert(0, str(Path(__file__).parents[1] / "server"))
    from srvkit import A2A, Api, Served, Turn

    data = tmp_path / "d"
    http = httpx.Client(timeout=60, verify=default_context())
    served = Served(data)
    try:
        a2a = A2A(http, served.agent_url, "0.3")
        for text in ("w1", "w2", "w3"):
            Turn(a2a.stream(text, "S1"))
    finally:
        served.kill9()
    for name in ("rewindtui.db-wal", "adk_sessions.db-wal"):
        wal = data / name
        assert wal.stat().st_size > 0
        with open(wal, "r+b") as f:
            f.truncate(wal.stat().st_size // 2)
    again = Served(data)
    try:
        api = Api(http, again.api_url)
        shown = [m["messageId"] for m in api.merged("S1")]
        a2a = A2A(http, again.agent_url, "0.3")
        frames = a2a.post_stream(
            a2a.rpc("message/stream", "SendStreamingMessage", {"message": a2a.message("w4", "S1")})
        )
    finally:
        again.process.kill()
        again.process.wait(30)
        err = again.process.stderr.read() if again.process.stderr else ""
        again.close()
    last = frames[-1].get("result", {})
    answered = json.dumps(last)
    if "the two stores disagree" in err:
        assert "session 'S1'" in err and "adk_sessions.db" in err
        assert "nothing was sent" in answered and f"rewindtui repair --data-dir {data} S1" in answered
    else:  # they agree: the model saw exactly the user turns the view shows, and w4
        seen = answered.split("history: ", 1)[1].split("; weather_calls", 1)[0]
        assert seen.count("'w") == len(shown) // 2 + 1, (seen, shown)


async def test_repair_takes_the_data_dir_before_or_after_the_command(tmp_path, capsys):
    from rewindtui.cli.main import main as cli_main

    await session_on_disk(tmp_path, "first words")
    for argv in (["repair", "--data-dir", str(tmp_path)], ["--data-dir", str(tmp_path), "repair"]):
        capsys.readouterr()
        assert await asyncio.to_thread(cli_main, argv) == 0
        assert capsys.readouterr().out.strip() == "nothing to repair: every session reads and the two stores agree"
    assert await asyncio.to_thread(cli_main, ["repair", "--data-dir", str(tmp_path / "none")]) == 1
    assert "does not exist" in capsys.readouterr().err


async def test_a_damaged_journal_entry_is_said_and_the_server_serves(tmp_path, caplog):
    sid = await session_on_disk(tmp_path, "first words")
    with sqlite3.connect(tmp_path / "rewindtui.db") as conn:
        conn.execute(
            "INSERT INTO intents (id, kind, session_id, payload, created_at) VALUES "
            "('i-1', 'rewind', ?, '{not json', '2026-01-01'), "
            "('i-2', 'rewind', ?, '{\"user_id\": \"local\"}', '2026-01-02')",
            (sid, sid),
        )
    conn.close()
    caplog.set_level(logging.WARNING)
    with EmbeddedServer(tmp_path) as srv:
        shown, answer, _ = await _read_and_send(srv, sid)
    said = " ".join(r.getMessage() for r in caplog.records)
    assert "journal entry i-1 (rewind of session" in said and "cannot be read; left in place" in said
    assert "journal entry i-2 (rewind of session" in said and "cannot be replayed" in said
    assert "first words" in shown and "fourth words" in answer


async def test_the_front_does_not_read_a_store_early_whose_turns_the_agent_lacks(tmp_path):
    """``serve``'s front answers the store's read-only REST before the agent loads -- but not when
    the two stores disagree: the view then waits for the full app, whose start says so."""
    from rewindtui.server.http.front import Front
    from rewindtui.server.http.options import ServerOptions

    await session_on_disk(tmp_path, "first words", "second words")

    def front() -> Front:
        return Front(tmp_path, build=lambda: None, card=lambda: {}, options=ServerOptions(), bind_host="127.0.0.1")

    agreeing = await front()._readable_store()
    assert agreeing is not None
    await agreeing.close()
    _drop_turn_from_adk(tmp_path, "second words")
    assert await front()._readable_store() is None
