"""A fork's copy of stored messages made inside the database (``INSERT ... SELECT``, on SQLite and
on a team server's PostgreSQL) is, row for row and byte for byte, the copy the Python path writes
(``rewinds._moved`` + ``moved_v1_text`` + ``message_row``), for any message the store holds
(hypothesis); where it could not be, the store says so (``fork_copy_fits``), the copy in the
database (``fork_copy``) says it did not copy them all, and the fork takes the Python path."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kit.postgres import new_database
from rewindtui.server.service.rewinds import _moved, moved_v1_text
from rewindtui.server.storage.store import _INSERT_MESSAGE, Store, message_row

SOURCE = "source-session"
FORK, TASK = "fork-session", "fork-task"
COLUMNS = "message_id, invocation_id, role, body, body_v1, render_version"

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(-(2**40), 2**40),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=12),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3),
    max_leaves=8,
)
metadata_dicts = st.fixed_dictionaries(
    {"kagent_invocation_id": st.sampled_from(["e-1", "e-2"])},  # as a turn's messages carry
    optional={
        "kagent_session_id": st.sampled_from([SOURCE, SOURCE, "another"]),
        "kagent_author": st.text(max_size=8),
        "extra": json_value,
    },
)
#: mostly what turns store (an object), sometimes null or none at all (then the Python path)
metadata = st.one_of(metadata_dicts, metadata_dicts, metadata_dicts, st.none(), st.just("absent"))


@st.composite
def messages(draw: Any) -> dict[str, Any]:
    parts: list[dict[str, Any]] = [{"kind": "text", "text": draw(st.text(max_size=30))}]
    if draw(st.booleans()):
        data = draw(st.dictionaries(st.text(max_size=6), json_value, max_size=3))
        if draw(st.integers(0, 3)) == 0:  # the session's id also inside a part: stored twice in the text
            data["contextId"] = SOURCE
        parts.append({"kind": "data", "data": data})
    message: dict[str, Any] = {
        "kind": "message",
        "messageId": draw(st.uuids()).hex,
        "role": draw(st.sampled_from(["user", "agent"])),
        "parts": parts,
        "contextId": SOURCE,
        "taskId": draw(st.sampled_from(["task-a", "task-b"])),
    }
    meta = draw(metadata)
    if meta != "absent":
        message["metadata"] = meta
    return message


#: each test on SQLite and on a team server's PostgreSQL (tests/server/conftest.py)
ENGINES = ("sqlite", "postgresql")
#: the PostgreSQL database of each engine's run (one per test module: rows are deleted after each example)
_URLS: dict[str, str | None] = {}


def _url(engine: str) -> str | None:
    if engine not in _URLS:
        _URLS[engine] = new_database("fk") if engine == "postgresql" else None
    return _URLS[engine]


async def copies(
    root: Path, batch: list[dict[str, Any]], engine: str = "sqlite"
) -> tuple[bool, list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    """(whether it fits, the rows the database copy writes, the rows the Python copy writes). The
    database copy is the one a fork makes (``fork_copy``: only the messages that fit, and whether
    that was all of them, which must be what ``fork_copy_fits`` said)."""
    store = Store(root / "store.db", database_url=_url(engine))
    await store.open()
    try:
        async with store.transaction() as tx:
            await tx.execute([(_INSERT_MESSAGE, message_row(SOURCE, "task-a", m)) for m in batch])
        rows = await store._fetchall("SELECT seq FROM messages WHERE session_id = ? ORDER BY seq", (SOURCE,))
        seqs = [r[0] for r in rows][::-1]  # not in seq order: the copy keeps the order asked
        fits = await store.fork_copy_fits(seqs)
        python = []
        for body, v1 in await store.message_pairs(seqs):
            moved = _moved(json.loads(body), FORK, TASK)
            python.append(message_row(FORK, TASK, moved, moved_v1_text(v1, FORK, TASK))[2:])
        async with store.transaction() as tx:
            complete = await store.fork_copy(tx, FORK, TASK, seqs)
        assert complete == fits
        database = await store._fetchall(
            f"SELECT {COLUMNS} FROM messages WHERE session_id = ? AND task_id = ? ORDER BY seq", (FORK, TASK)
        )
        # each message the database copied (all, or those that fit) is the Python copy of it, in order
        assert all(row in python for row in database)
        assert [python.index(row) for row in database] == sorted(python.index(row) for row in database)
        if not fits:
            database = []
        return fits, database, python
    finally:
        async with store.transaction() as tx:
            await tx.execute([("DELETE FROM messages", ())])
        await store.close()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(messages(), min_size=1, max_size=3))
def test_the_database_copy_is_the_python_copy(tmp_path_factory: Any, engine: str, batch: list[dict[str, Any]]) -> None:
    fits, database, python = asyncio.run(copies(tmp_path_factory.mktemp("fork"), batch, engine))
    if fits:
        assert database == python


def test_plain_messages_are_copied_in_the_database(tmp_path: Path, engine: str) -> None:
    batch = [
        {
            "kind": "message",
            "messageId": f"m-{i}",
            "role": role,
            "parts": [{"kind": "text", "text": f'héllo … 世界 "{i}"\n'}],
            "contextId": SOURCE,
            "taskId": "task-a",
            "metadata": {"kagent_session_id": SOURCE, "kagent_invocation_id": "e-1", "kagent_author": role},
        }
        for i, role in enumerate(["user", "agent", "user"])
    ]
    fits, database, python = asyncio.run(copies(tmp_path, batch, engine))
    assert fits
    assert database == python and len(database) == 3
    assert {json.loads(row[3])["contextId"] for row in database} == {FORK}


def test_a_message_holding_the_session_id_twice_takes_the_python_path(tmp_path: Path, engine: str) -> None:
    message = {
        "kind": "message",
        "messageId": "m-1",
        "role": "agent",
        "parts": [{"kind": "data", "data": {"contextId": SOURCE}}],
        "contextId": SOURCE,
        "taskId": "task-a",
        "metadata": {},
    }
    fits, database, _ = asyncio.run(copies(tmp_path, [message], engine))
    assert not fits and database == []
