"""Issue items 5-7: a store damaged on disk -- a garbled message, a missing or empty database,
a corrupt file, loose file modes, a send on a session ADK does not know. Real embedded servers
on real SQLite files; the damage is done with sqlite3 between runs."""

from __future__ import annotations

import logging
import os
import sqlite3
import stat
from pathlib import Path

import pytest

from kit.servers import connected_chat, session_on_disk
from rewindtui.chat import TurnRefused
from rewindtui.server import EmbeddedServer
from rewindtui.server.storage.integrity import DataDirProblem

pytestmark = pytest.mark.timeout(90)


def _garble(db: Path, contains: str) -> int:
    """Put invalid UTF-8 into the stored message whose body contains ``contains`` (both columns)."""
    conn = sqlite3.connect(db)
    try:
        seq, body = conn.execute("SELECT seq, body FROM messages WHERE body LIKE ?", (f"%{contains}%",)).fetchone()
        raw = body.encode().replace(contains.encode(), b"\xff\xfe\x80" + contains.encode()[3:])
        conn.execute(
            "UPDATE messages SET body = CAST(? AS TEXT), body_v1 = CAST(? AS TEXT) WHERE seq = ?", (raw, raw, seq)
        )
        conn.commit()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return seq
    finally:
        conn.close()


async def test_one_garbled_message_reads_as_a_placeholder(tmp_path, caplog):
    sid = await session_on_disk(tmp_path, "first words", "second words", "third words")
    seq = _garble(tmp_path / "rewindtui.db", "second words")
    caplog.set_level(logging.WARNING)
    with EmbeddedServer(tmp_path) as srv:
        chat = await connected_chat(srv)
        try:
            await chat.open(sid)
            texts = [i.text for i in chat.conversation.items]
            a2a = await chat.client.get_task(chat.conversation.current_task_id or "")
        finally:
            await chat.client.aclose()
    assert any("could not be read from the store" in t and "not valid UTF-8" in t for t in texts), texts
    assert "first words" in " ".join(texts) and "third words" in " ".join(texts)
    assert a2a["id"]
    assert any(f"stored message {seq} cannot be read" in r.getMessage() for r in caplog.records)


@pytest.mark.parametrize("damage", ["missing", "empty"])
async def test_a_missing_or_empty_store_refuses_to_start(tmp_path, damage):
    await session_on_disk(tmp_path, "hello")
    store = tmp_path / "rewindtui.db"
    for side in ("-wal", "-shm"):
        Path(str(store) + side).unlink(missing_ok=True)
    if damage == "missing":
        store.unlink()
    else:
        store.write_bytes(b"")
    with pytest.raises(DataDirProblem) as caught:
        EmbeddedServer(tmp_path).start()
    text = str(caught.value)
    assert "rewindtui.db" in text and "adk_sessions.db holds 1 session" in text and "\n" not in text
    assert store.exists() is (damage == "empty")  # nothing was created over it


async def test_a_missing_adk_database_refuses_to_start(tmp_path):
    await session_on_disk(tmp_path, "hello")
    for side in ("", "-wal", "-shm"):
        Path(str(tmp_path / "adk_sessions.db") + side).unlink(missing_ok=True)
    with pytest.raises(
        DataDirProblem,
        match=r"adk_sessions\.db is missing while .*rewindtui\.db holds 1 session.*restore both databases",
    ):
        EmbeddedServer(tmp_path).start()


def test_a_corrupt_file_is_one_line_naming_it(tmp_path, capsys):
    from rewindtui.server.process.serve import main as serve_main

    (tmp_path / "rewindtui.db").write_bytes(b"this is not a database at all " * 200)
    rc = serve_main(["--data-dir", str(tmp_path), "--port", "0"])
    err = capsys.readouterr().err.strip()
    assert rc == 1
    assert len(err.splitlines()) == 1 and "Traceback" not in err
    assert str(tmp_path / "rewindtui.db") in err and "restore it from a backup" in err


async def test_a_send_on_a_session_adk_does_not_know_stores_nothing(tmp_path):
    sid = await session_on_disk(tmp_path, "hello")
    other = tmp_path / "other"
    await session_on_disk(other, "elsewhere")  # an ADK database with a session, but not this one
    for side in ("", "-wal", "-shm"):
        src = Path(str(other / "adk_sessions.db") + side)
        dst = Path(str(tmp_path / "adk_sessions.db") + side)
        dst.unlink(missing_ok=True)
        if src.exists():
            dst.write_bytes(src.read_bytes())
    tasks_before = _count(tmp_path / "rewindtui.db", "tasks")
    with EmbeddedServer(tmp_path) as srv:
        chat = await connected_chat(srv)
        try:
            await chat.open(sid)
            with pytest.raises(TurnRefused, match="not in the agent's session database"):
                await chat.send("again")
            state = chat.conversation.turn_state
        finally:
            await chat.client.aclose()
    assert _count(tmp_path / "rewindtui.db", "tasks") == tasks_before
    assert state != "failed"


def _count(db: Path, table: str) -> int:
    conn = sqlite3.connect(db)
    try:
        return int(conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])
    finally:
        conn.close()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_new_data_is_private(tmp_path):
    data = tmp_path / "new"
    await session_on_disk(data, "hello")
    assert _mode(data) == 0o700
    files = [p for p in data.iterdir() if p.name.startswith(("rewindtui.db", "adk_sessions.db"))]
    assert {p.name for p in files} >= {"rewindtui.db", "adk_sessions.db"}
    for path in files:
        assert _mode(path) == 0o600, path


async def test_loose_modes_are_tightened_with_a_note(tmp_path, caplog):
    await session_on_disk(tmp_path, "hello")
    os.chmod(tmp_path, 0o755)
    os.chmod(tmp_path / "rewindtui.db", 0o644)
    caplog.set_level(logging.WARNING)
    with EmbeddedServer(tmp_path):
        pass
    assert _mode(tmp_path) == 0o700 and _mode(tmp_path / "rewindtui.db") == 0o600
    assert any("had mode 644" in r.getMessage() for r in caplog.records)


def test_a_full_disk_at_start_says_so(tmp_path, monkeypatch):
    import shutil

    from rewindtui.server.storage import integrity

    real = shutil.disk_usage
    monkeypatch.setattr(integrity.shutil, "disk_usage", lambda p: real(p)._replace(free=4096))
    with pytest.raises(DataDirProblem, match=r"the disk holding .* is full \(4,096 bytes free\): free some space"):
        integrity.check_data_dir(tmp_path)


def test_an_open_failure_names_the_file_and_the_disk():
    from rewindtui.server.storage.integrity import describe_open_failure

    text = describe_open_failure(Path("/data/rewindtui.db"), sqlite3.OperationalError("database or disk is full"))
    assert text.startswith("cannot open /data/rewindtui.db: database or disk is full -- is the disk full?")


@pytest.mark.parametrize("name", ["rewindtui.db", "adk_sessions.db"])
def test_a_database_damaged_after_the_check_is_one_line_naming_it(tmp_path, capsys, monkeypatch, name):
    """The file turns bad between the start's check and the open (the check is skipped here):
    `serve` says so in one line naming the file and what to do, the traceback goes to
    server.log only, and the exit status is 1."""
    from rewindtui.server.http import app as app_module
    from rewindtui.server.process.serve import main as serve_main
    from rewindtui.server.storage import integrity

    monkeypatch.setattr(integrity, "check_data_dir", lambda data_dir: [])
    monkeypatch.setattr(app_module, "check_data_dir", lambda data_dir: [])
    (tmp_path / name).write_bytes(b"this is not a database at all " * 200)
    rc = serve_main(["--data-dir", str(tmp_path), "--port", "0"])
    err = capsys.readouterr().err.strip()
    assert rc == 1
    assert len(err.splitlines()) == 1 and "Traceback" not in err, err
    assert f"cannot open {tmp_path / name}" in err and "restore it from a backup" in err, err
    logged = (tmp_path / "server.log").read_text()
    assert "file is not a database" in logged
    if name == "adk_sessions.db":  # the full app's failure: its traceback is in the log
        assert "Traceback" in logged
