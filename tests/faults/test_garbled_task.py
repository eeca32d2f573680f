"""A garbled task row (not a message row) does not make its session unreadable: the task reads
as a placeholder saying why (logged with its id), its messages and every other task read as
stored, GetTask / ListTasks / the REST pages answer, and the session takes a new turn."""

from __future__ import annotations

import json
import logging
import sqlite3
from pathlib import Path

import pytest

from kit.servers import connected_chat, session_on_disk
from rewindtui.server import EmbeddedServer
from rewindtui.server.storage.store import task_json, task_row

pytestmark = pytest.mark.timeout(90)


#: how a task row's body is damaged: bytes that are not UTF-8 between two keys (so not JSON
#: either), the body cut in half (UTF-8, not JSON), the body stored as a BLOB
DAMAGE = {
    "not-utf8": lambda body: body.encode().replace(b',"status"', b',\xff\xfe"status"', 1),
    "cut": lambda body: body[: len(body) // 2],
    "blob": lambda body: body.encode(),
}
CAST = {"not-utf8": "TEXT", "cut": "TEXT", "blob": "BLOB"}


def _garble_task(db: Path, owns: str, damage: str) -> str:
    """Damage the body of the turn task that owns the message containing ``owns``; its id."""
    conn = sqlite3.connect(db)
    try:
        (task_id,) = conn.execute("SELECT task_id FROM messages WHERE body LIKE ?", (f"%{owns}%",)).fetchone()
        (body,) = conn.execute("SELECT body FROM tasks WHERE id = ?", (task_id,)).fetchone()
        raw = DAMAGE[damage](body)
        conn.execute(f"UPDATE tasks SET body = CAST(? AS {CAST[damage]}) WHERE id = ?", (raw, task_id))
        conn.commit()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return str(task_id)
    finally:
        conn.close()


@pytest.mark.parametrize("damage", list(DAMAGE))
async def test_a_garbled_task_reads_as_a_placeholder_and_the_session_goes_on(tmp_path, caplog, damage):
    sid = await session_on_disk(tmp_path, "first words", "second words", "third words")
    task_id = _garble_task(tmp_path / "rewindtui.db", "second words", damage)
    caplog.set_level(logging.WARNING)
    with EmbeddedServer(tmp_path) as srv:
        chat = await connected_chat(srv)
        try:
            await chat.open(sid)  # REST pages of the session's tasks
            shown = " ".join(i.text for i in chat.conversation.items)
            got = await chat.client.get_task(task_id)  # A2A GetTask of the garbled one
            listed = await chat.client.list_tasks(sid)  # A2A ListTasks over the session
            await chat.send("fourth words")  # the session takes a new turn
            after = " ".join(i.text for i in chat.conversation.items)
        finally:
            await chat.client.aclose()
    assert "first words" in shown and "second words" in shown and "third words" in shown, shown
    assert "this turn's stored task could not be read" in shown, shown
    assert got["id"] == task_id and (got.get("metadata") or {}).get("rewindtui_unreadable")
    assert task_id in {t["id"] for t in listed.tasks}
    assert "fourth words" in after and "third words" in after
    assert any(
        f"stored task {task_id}" in r.getMessage() and "cannot be read" in r.getMessage() for r in caplog.records
    )


GOOD = '{"kind": "task", "id": "t-3", "contextId": "s-1", "status": {"state": "completed"}}'


@pytest.mark.parametrize(
    "body, refs, why",
    [
        (GOOD, None, None),
        (GOOD, "[1, 2]", None),
        (GOOD, "[1, 2", "history references are not JSON"),
        (GOOD, '["1"]', "not a list of message numbers"),
        (GOOD, "[true]", "not a list of message numbers"),
        ("[1]", None, "not a JSON object"),
        (7, None, "not text (a int)"),
        ('{"kind": "task", "id": "t-3", "contextId": "s-1"}', None, "status is missing"),
        ('{"kind": "task", "id": 3, "status": {"state": "completed"}}', None, "id is missing or not text"),
        ('{"id": "t-3", "status": {"state": "completed"}, "artifacts": 5}', None, "artifacts are not a list"),
        ('{"id": "t-3", "status": {"state": "completed"}, "metadata": []}', None, "metadata is not an object"),
        ('{"id": "t-3", "status": {"state": "completed", "message": {"role": "agent"}}}', None, "status message"),
    ],
)
def test_a_task_row_reads_as_stored_or_as_a_placeholder_with_the_reason(body, refs, why):
    row = task_row((3, "t-3", "s-1", "u", "rewind", None, "completed", "c", "u", None, None, refs, body))
    data = json.loads(task_json(row, []))  # always one JSON task
    assert data["id"] == "t-3" and data["contextId"] == "s-1"
    if why is None:
        assert row.unreadable == "" and row.body == body and "metadata" not in data
        return
    assert why in row.unreadable and data["metadata"]["rewindtui_unreadable"] == row.unreadable
    assert row.history_refs == (None if refs is None else "[]")
    assert data["status"]["state"] == "completed"
    assert "stored task #3" in data["history"][-1]["parts"][0]["text"]


@pytest.mark.parametrize(
    "body, v1, why",
    [
        (
            '{"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]}',
            False,
            None,
        ),
        ('{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}', True, None),
        ('{"kind": "message", "messageId": "m", "role": "agent"zzzarts": []}', False, "not JSON"),
        ('{"kind": "message", "messageId": "m", "ro', False, "not JSON"),
        (
            '{"kind": "message", "messageId": "m", "role": "agent", "parts": 5}',
            False,
            "parts are missing or not a list",
        ),
        (
            '{"kind": "message", "messageId": "m", "role": "agent", "parts": [5]}',
            False,
            "parts are missing or not a list",
        ),
        ('{"kind": "message", "role": "agent", "parts": []}', False, "messageId is missing"),
        ('{"kind": "message", "messageId": "m", "role": "robot", "parts": []}', False, "role is missing or not one of"),
        ('{"kind": "task", "messageId": "m", "role": "agent", "parts": []}', False, "kind is not 'message'"),
        (
            '{"messageId": "m", "role": "agent", "parts": []}',
            True,
            "role is missing or not one of ROLE_AGENT/ROLE_USER",
        ),
        ('{"kind": "message", "messageId": "m", "role": "agent", "parts": [], "metadata": 1}', False, "metadata"),
        ("[]", False, "not a JSON object"),
    ],
)
def test_a_message_body_reads_as_stored_or_as_a_placeholder_with_the_reason(body, v1, why):
    from rewindtui.server.storage.undecodable import UNREADABLE_KEY, checked_body, message_problem

    reason = message_problem(body, v1=v1)
    answered = json.loads(checked_body(body, 9, v1=v1))  # always one JSON message
    if why is None:
        assert reason is None and answered == json.loads(body)
        return
    assert reason is not None and why in reason
    assert answered["metadata"][UNREADABLE_KEY] is True
    assert why in answered["parts"][0]["text"] and "stored message #9" in answered["parts"][0]["text"]
    assert answered["messageId"] == ("m" if '"messageId": "m"' in body else "unreadable-9")


def test_sqlite_and_python_agree_on_which_bodies_are_sound():
    """The store checks bodies with SQLite's JSON functions (fast) and explains in Python: the two
    must pass exactly the same bodies, for both dialects."""
    import sqlite3

    from rewindtui.server.storage.undecodable import decode_text, message_problem, sound_sql

    zero_three = '{"kind": "message", "messageId": "m", "role": "agent", "parts": [{"kind": "text", "text": "hi"}]}'
    one = '{"messageId": "m", "role": "ROLE_USER", "parts": [{"text": "hi"}]}'
    bodies = [
        zero_three,
        one,
        zero_three[:40],
        zero_three.replace(',"p', "zzz"),
        zero_three.replace(', "p', "zzz"),
        "[]",
        '"x"',
        "",
        "{}",
        '{"messageId": "m", "role": "agent", "parts": [1]}',
        '{"messageId": "m", "role": "agent", "parts": {}}',
        '{"messageId": 5, "role": "agent", "parts": []}',
        '{"messageId": "", "role": "agent", "parts": []}',
        '{"kind": "task", "messageId": "m", "role": "agent", "parts": []}',
        '{"messageId": "m", "role": "agent", "parts": [], "metadata": 3}',
        '{"messageId": "m", "role": "agent", "parts": [], "metadata": null}',
        '{"messageId": "m", "parts": []}',
        '{"messageId": "m", "role": "ROLE_AGENT", "parts": []}',
        None,
        5,
        b'{"a\xff": 1}',
    ]
    conn = sqlite3.connect(":memory:")
    conn.text_factory = decode_text
    conn.execute("CREATE TABLE m (seq INTEGER PRIMARY KEY, body)")
    conn.executemany("INSERT INTO m (body) VALUES (?)", [(b,) for b in bodies])
    for v1 in (False, True):
        rows = conn.execute(f"SELECT seq, body, {sound_sql('body', v1=v1)} FROM m ORDER BY seq").fetchall()
        for seq, body, sound in rows:
            assert bool(sound) == (message_problem(body, v1=v1) is None), (v1, seq, body)
    conn.close()
