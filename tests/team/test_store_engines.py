"""The task store on both engines: SQLite (the data dir's file) and PostgreSQL (store_pg.py)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from rewindtui.server.storage.store import SCHEMA_VERSION, SchemaTooNew, SessionRow, Store
from rewindtui.server.storage.store_pg import translate


def test_translate_rewrites_placeholders_but_not_quoted_text() -> None:
    sql = "SELECT '?', x FROM t WHERE a = ? AND b IS NOT ? AND c IN (SELECT value FROM json_each(?))"
    assert translate(sql) == (
        "SELECT '?', x FROM t WHERE a = $1 AND b IS DISTINCT FROM $2 "
        "AND c IN (SELECT value::bigint FROM rt_json_each($3))"
    )
    assert translate("BEGIN IMMEDIATE") == "BEGIN"
    assert translate("SELECT m.seq FROM json_each(?) AS j CROSS JOIN messages AS m ON m.seq = j.value") == (
        "SELECT m.seq FROM rt_json_each($1) AS j JOIN messages AS m ON m.seq = j.value::bigint"
    )


@pytest.fixture(params=["sqlite", "postgresql"])
def store_args(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, object]:
    if request.param == "sqlite":
        return {"path": tmp_path / "rewindtui.db"}
    from kit.postgres import new_database

    return {"path": tmp_path / "unused.db", "database_url": new_database()}


def _turn(task_id: str, session_id: str, text: str) -> tuple[dict, dict]:
    message = {
        "kind": "message",
        "messageId": f"m-{task_id}",
        "role": "user",
        "contextId": session_id,
        "taskId": task_id,
        "parts": [{"kind": "text", "text": text}],
    }
    task = {"kind": "task", "id": task_id, "contextId": session_id, "status": {"state": "submitted"}}
    return task, message


async def _round_trip(store_args: dict[str, object]) -> None:
    store = Store(**store_args)  # type: ignore[arg-type]
    await store.open()
    try:
        await store.create_session(SessionRow("s1", "alice", "", "local/demo", "t0", "t0"))
        for i in range(3):
            task, message = _turn(f"t{i}", "s1", f"hello {i}")
            await store.start_turn(task=task, session_id="s1", user_id="alice", user_message=message, name=f"n{i}")
        tasks = await store.session_tasks("s1")
        assert [t.id for t in tasks] == ["t0", "t1", "t2"]
        bodies = await store.tasks_history_bodies(tasks)
        assert ["hello 1" in b[0] for b in bodies.values()] == [False, True, False]
        assert [s.id for s in await store.list_sessions("alice")] == ["s1"]
        assert await store.list_sessions("bob") == []
        assert await store.counts("s1") == (3, 3)
        assert (await store.get_session("s1")).name == "n0"  # type: ignore[union-attr]
    finally:
        await store.close()
    again = Store(**store_args)  # type: ignore[arg-type]
    await again.open()  # a second open migrates nothing and keeps everything
    try:
        assert await again.counts("s1") == (3, 3)
    finally:
        await again.close()


def test_the_store_keeps_sessions_tasks_and_messages_on_either_engine(store_args: dict[str, object]) -> None:
    asyncio.run(_round_trip(store_args))


def test_a_postgresql_database_of_a_newer_schema_is_refused_in_one_sentence(pg_url: str, tmp_path: Path) -> None:
    async def run() -> None:
        store = Store(tmp_path / "x.db", database_url=pg_url)
        await store.open()
        await store._write([("UPDATE schema_version SET version = ?", (SCHEMA_VERSION + 1,))])
        await store.close()
        again = Store(tmp_path / "x.db", database_url=pg_url)
        with pytest.raises(SchemaTooNew) as caught:
            await again.open()
        text = str(caught.value)
        assert "written by a newer rewindtui" in text and "--database-url" in text and "\n" not in text
        assert text.count(". ") == 0  # one sentence

    asyncio.run(run())
