"""Damaging one stored row of either database, in each kind of damage the stores must survive:
bytes that are not UTF-8, text that is not JSON (a few bytes changed, or cut short), a field of
the wrong type, a field missing. Done with sqlite3 on the files while no server runs; each
damage keeps the database itself sound (``PRAGMA integrity_check`` ok)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from pathlib import Path
from typing import Any

KINDS = ("utf8", "json", "cut", "type", "missing")


def _not_utf8(text: str) -> bytes:
    raw = text.encode()
    return raw[:10] + b"\xff\xfe\x80" + raw[13:]


def _not_json(text: str) -> str:
    """``,"p`` of the first ``,"p...`` replaced by ``zzz`` (the issue's example), else the ``{"p``
    of ``{"parts"``, else the first ``,"``."""
    for mark in (',"p', ', "p', '{"p', ',"', ', "'):
        at = text.find(mark)
        if at >= 0:
            break
    assert at >= 0, text[:80]
    return text[:at] + "zzz" + text[at + 3 :]


def _edited(text: str, edit: Callable[[dict[str, Any]], None]) -> str:
    data = json.loads(text)
    edit(data)
    return json.dumps(data)


def _message(kind: str, text: str) -> Any:
    return {
        "utf8": lambda: _not_utf8(text),
        "json": lambda: _not_json(text),
        "cut": lambda: text[:40],
        "type": lambda: _edited(text, lambda d: d.update(parts=5)),
        "missing": lambda: _edited(text, lambda d: d.pop("messageId")),
    }[kind]()


def _task(kind: str, text: str) -> Any:
    return {
        "utf8": lambda: _not_utf8(text),
        "json": lambda: _not_json(text),
        "cut": lambda: text[:40],
        "type": lambda: _edited(text, lambda d: d.update(status="done")),
        "missing": lambda: _edited(text, lambda d: d.pop("status")),
    }[kind]()


def _event(kind: str, text: str) -> Any:
    return {
        "utf8": lambda: _not_utf8(text),
        "json": lambda: _not_json(text),
        "cut": lambda: text[:40],
        "type": lambda: _edited(text, lambda d: d.update(content="not content")),
        "missing": lambda: _edited(text, lambda d: d.pop("author")),
    }[kind]()


def _state(kind: str, text: str) -> Any:
    return {
        "utf8": lambda: b'{"k\xff\xfe": 1}',
        "json": lambda: "{not json",
        "cut": lambda: '{"draft": "a long value cut sh',
        "type": lambda: "[1, 2, 3]",
        "missing": lambda: "",  # the column is NOT NULL: the nearest to a missing state
    }[kind]()


def _store(db: Path, sql: str, params: tuple[Any, ...]) -> None:
    conn = sqlite3.connect(db)
    try:
        value = params[0]
        cast = "TEXT" if isinstance(value, bytes) else None
        if cast:
            sql = sql.replace("= ?", "= CAST(? AS TEXT)", 1)
        conn.execute(sql, params)
        conn.commit()
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    finally:
        conn.close()


def damage_message(data_dir: Path, contains: str, kind: str) -> int:
    """Damage both bodies (0.3 and 1.0 JSON) of the stored message containing ``contains``; its seq."""
    db = data_dir / "rewindtui.db"
    with sqlite3.connect(db) as conn:
        seq, body, body_v1 = conn.execute(
            "SELECT seq, body, body_v1 FROM messages WHERE body LIKE ? ORDER BY seq LIMIT 1", (f"%{contains}%",)
        ).fetchone()
    conn.close()
    _store(db, "UPDATE messages SET body = ? WHERE seq = ?", (_message(kind, body), seq))
    _store(db, "UPDATE messages SET body_v1 = ? WHERE seq = ?", (_message(kind, body_v1), seq))
    return int(seq)


def damage_task(data_dir: Path, owns: str, kind: str) -> str:
    """Damage the body of the task owning the message containing ``owns``; its id."""
    db = data_dir / "rewindtui.db"
    with sqlite3.connect(db) as conn:
        (task_id,) = conn.execute("SELECT task_id FROM messages WHERE body LIKE ? LIMIT 1", (f"%{owns}%",)).fetchone()
        (body,) = conn.execute("SELECT body FROM tasks WHERE id = ?", (task_id,)).fetchone()
    conn.close()
    _store(db, "UPDATE tasks SET body = ? WHERE id = ?", (_task(kind, body), task_id))
    return str(task_id)


def damage_event(data_dir: Path, contains: str, kind: str) -> str:
    """Damage ``events.event_data`` of the ADK event containing ``contains``; the event's id."""
    db = data_dir / "adk_sessions.db"
    with sqlite3.connect(db) as conn:
        event_id, data = conn.execute(
            "SELECT id, event_data FROM events WHERE event_data LIKE ? ORDER BY timestamp LIMIT 1", (f"%{contains}%",)
        ).fetchone()
    conn.close()
    _store(db, "UPDATE events SET event_data = ? WHERE id = ?", (_event(kind, data), event_id))
    return str(event_id)


def damage_state(data_dir: Path, session_id: str, kind: str) -> None:
    """Damage ``sessions.state`` of the ADK session ``session_id``."""
    db = data_dir / "adk_sessions.db"
    _store(db, "UPDATE sessions SET state = ? WHERE id = ?", (_state(kind, "{}"), session_id))
