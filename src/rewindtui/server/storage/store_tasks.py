"""The store's tasks and messages: a turn's rows written as it runs, tasks read one, by session,
by page or by update time, and the message bodies of their histories."""

from __future__ import annotations

import sqlite3
from collections.abc import Sequence
from typing import Any

from rewindtui.a2a import contract
from rewindtui.a2a.dialect import TERMINAL_STATES
from rewindtui.server.shared.wire import RENDER_VERSION, dumps, message_v1_text, now_iso
from rewindtui.server.storage.history_refs import Link, parse
from rewindtui.server.storage.store_conn import StoreBase, Tx
from rewindtui.server.storage.store_rows import (
    _INSERT_MESSAGE,
    _INSERT_TASK,
    _TASK_COLS,
    Statement,
    TaskPage,
    TaskRow,
    _decode_cursor,
    _encode_cursor,
    _task_body,
    message_row,
    task_row,
)
from rewindtui.server.storage.undecodable import checked_body, sound_sql

#: A message added to a task that a later rewind task's stored history already holds -- a question
#: brought back by a redo (the undo of a rewind) and answered after it: the redo's history is the
#: session's effective history (``SessionLog.effective`` reads it, and so do clients, from where the
#: redo's Task stands in the list), so the answer, the tool's result and the reply join it there;
#: else the session's history (and every later rewind's) would end at the question. Only tasks
#: after the message's own (``seq``: none for a turn running as usual) are looked into.
_JOIN_REWINDS = (
    "UPDATE tasks SET history_refs = json_insert(history_refs, '$[#]', "
    "(SELECT seq FROM messages WHERE session_id = ? AND message_id = ?)), "
    "body = CASE WHEN json_valid(body) THEN json_set(body, "
    f"'$.metadata.{contract.EFFECTIVE_HISTORY_TOTAL_KEY}', json_array_length(history_refs) + 1) ELSE body END "
    "WHERE session_id = ? AND seq > (SELECT seq FROM tasks WHERE id = ?) AND kind IN ('rewind', 'redo') "
    "AND rewound_by IS NULL AND substr(history_refs, 1, 1) = '[' AND json_valid(history_refs) AND EXISTS "
    "(SELECT 1 FROM json_each(tasks.history_refs) AS j JOIN messages AS m ON m.seq = j.value WHERE m.task_id = ?)"
)
#: The same for rewind tasks whose history is a chain link (:mod:`.history_refs`): the candidates
#: (an index range after the task: none for a turn running as usual), resolved in Python.
_LINKS_AFTER = (
    "SELECT seq, history_refs FROM tasks WHERE session_id = ? AND seq > (SELECT seq FROM tasks WHERE id = ?) "
    "AND kind IN ('rewind', 'redo') AND rewound_by IS NULL AND substr(history_refs, 1, 1) = '{'"
)
_JOIN_LINK = (
    "UPDATE tasks SET history_refs = ?, body = CASE WHEN json_valid(body) THEN json_set(body, "
    f"'$.metadata.{contract.EFFECTIVE_HISTORY_TOTAL_KEY}', ?) ELSE body END WHERE seq = ?"
)
#: (``m.session_id || ''``: not a term an index serves -- else SQLite's planner walks the session's
#: messages (``messages_log``) once per task of the range, quadratic in the session: 12 s at 8,000
#: turns; this way each task's messages by ``messages_by_task``)
_RANGE_SEQS = (
    "SELECT m.seq FROM tasks AS t JOIN messages AS m ON m.task_id = t.id WHERE t.session_id = ? "
    "AND t.seq >= ? AND t.seq <= ? AND m.session_id || '' = ? AND m.seq <= ? ORDER BY t.seq, m.seq"
)
#: the same, newest first, at most ``?`` of them (a page of a long session asks for a rewind's
#: newest messages only: the rest of its history is not walked)
_RANGE_SEQS_NEWEST = _RANGE_SEQS.replace("ORDER BY t.seq, m.seq", "ORDER BY t.seq DESC, m.seq DESC LIMIT ?")
_KNOWN_SEQS = (
    "SELECT m.seq FROM json_each(?) AS j JOIN messages AS m ON m.seq = j.value WHERE m.session_id = ? ORDER BY j.key"
)


def history_seqs(conn: Any, session_id: str, seq: int, text: str | None, newest: int | None = None) -> list[int]:
    """The message seqs of the history rewind task ``seq`` stores (``text``: its ``history_refs``),
    oldest first, its chain of links resolved from the database (``conn``: a store connection).
    A history that cannot be read is empty (as :func:`~.store_rows.task_row` answers it).
    ``newest``: only the newest that many (of a link on no other, only they are read)."""
    chain: list[tuple[int, list[int] | Link]] = []
    at: int | None = seq
    while at is not None and text is not None:
        try:
            stored = parse(text)
        except ValueError:
            stored = []
        chain.append((at, stored))
        if not isinstance(stored, Link) or stored.base is None or stored.base >= at:
            break
        at = stored.base
        row = conn.execute(
            "SELECT history_refs FROM tasks WHERE seq = ? AND session_id = ? AND kind IN ('rewind', 'redo')",
            (at, session_id),
        ).fetchone()
        text = None if row is None else row[0]
    if newest and len(chain) == 1:
        return _newest_seqs(conn, session_id, chain[0][1], newest)
    out: list[int] = []
    for i, (_, stored) in enumerate(reversed(chain)):
        if isinstance(stored, list):
            # a base's list as the task log reads it (messages of the session only); on top, as stored
            out = (
                stored
                if i == len(chain) - 1
                else [r[0] for r in conn.execute(_KNOWN_SEQS, (dumps(stored), session_id))]
            )
            continue
        out = out[: stored.upto] if i else []
        for segment in stored.segments:
            if isinstance(segment, int):
                out.append(segment)
            else:
                lo, hi, top = segment
                out += [r[0] for r in conn.execute(_RANGE_SEQS, (session_id, lo, hi, session_id, top))]
    return out[-newest:] if newest else out


def _newest_seqs(conn: Any, session_id: str, stored: list[int] | Link, newest: int) -> list[int]:
    """The newest ``newest`` seqs of a history stored whole (a list, as stored) or as a link on no
    other: its segments from the last, each range read newest first and no further than needed."""
    if isinstance(stored, list):
        return stored[-newest:]
    back: list[int] = []  # newest first
    for segment in reversed(stored.segments):
        need = newest - len(back)
        if need <= 0:
            break
        if isinstance(segment, int):
            back.append(segment)
        else:
            lo, hi, top = segment
            back += [r[0] for r in conn.execute(_RANGE_SEQS_NEWEST, (session_id, lo, hi, session_id, top, need))]
    return back[:newest][::-1]


class TaskStore(StoreBase):
    """Tasks and messages (a part of :class:`~rewindtui.server.storage.store.Store`)."""

    async def start_turn(
        self, *, task: dict[str, Any], session_id: str, user_id: str, user_message: dict[str, Any], name: str | None
    ) -> None:
        """Store a turn's task and its user message before the agent runs (one transaction)."""
        ts = now_iso()
        statements: list[Statement] = [
            (
                _INSERT_TASK,
                (
                    task["id"],
                    session_id,
                    user_id,
                    "turn",
                    None,
                    task["status"]["state"],
                    ts,
                    ts,
                    None,
                    _task_body(task),
                ),
            ),
            (_INSERT_MESSAGE, message_row(session_id, task["id"], user_message)),
        ]
        if name:
            statements.append(("UPDATE sessions SET name = ? WHERE id = ? AND name = ''", (name, session_id)))
        await self._write(statements)

    async def set_turn_invocation(
        self, *, task: dict[str, Any], user_message: dict[str, Any], invocation_id: str, tx: Tx | None = None
    ) -> None:
        """The turn's invocation is known: record it on the task and its user message."""
        await self._write(
            [
                (
                    "UPDATE tasks SET invocation_id = ?, state = ?, updated_at = ?, body = ? WHERE id = ?",
                    (invocation_id, task["status"]["state"], now_iso(), _task_body(task), task["id"]),
                ),
                (
                    "UPDATE messages SET invocation_id = ?, body = ?, body_v1 = ?, render_version = ? "
                    "WHERE task_id = ? AND message_id = ?",
                    (
                        invocation_id,
                        dumps(user_message),
                        message_v1_text(user_message),
                        RENDER_VERSION,
                        task["id"],
                        user_message["messageId"],
                    ),
                ),
            ],
            tx,
        )

    async def update_task(self, task: dict[str, Any], *, touch_session: bool = False, tx: Tx | None = None) -> None:
        ts = now_iso()
        statements: list[Statement] = [
            (
                "UPDATE tasks SET state = ?, updated_at = ?, body = ? WHERE id = ?",
                (task["status"]["state"], ts, _task_body(task), task["id"]),
            )
        ]
        if touch_session:
            statements.append(("UPDATE sessions SET updated_at = ? WHERE id = ?", (ts, task["contextId"])))
        await self._write(statements, tx)

    async def add_messages(
        self, *, session_id: str, task_id: str, messages: Sequence[dict[str, Any]], tx: Tx | None = None
    ) -> None:
        """Store messages of a task; each also joins the stored history of every current rewind
        (redo) task after it that holds the task's earlier messages (:data:`_JOIN_REWINDS`)."""
        statements: list[Statement] = []
        for m in messages:
            statements.append((_INSERT_MESSAGE, message_row(session_id, task_id, m)))
            statements.append((_JOIN_REWINDS, (session_id, m["messageId"], session_id, task_id, task_id)))
        ids = [m["messageId"] for m in messages]

        def run(conn: Any) -> None:
            links = conn.execute(_LINKS_AFTER, (session_id, task_id)).fetchall()
            holding = [(seq, text) for seq, text in links if _holds_task(conn, session_id, seq, text, task_id)]
            for sql, params in statements:
                conn.execute(sql, params)
            if holding:
                marks = ",".join("?" for _ in ids)
                new = dict(
                    conn.execute(
                        f"SELECT message_id, seq FROM messages WHERE session_id = ? AND message_id IN ({marks})",
                        (session_id, *ids),
                    ).fetchall()
                )
                for seq, text in holding:
                    link = parse(text)
                    assert isinstance(link, Link)
                    joined = [new[i] for i in ids if i in new]
                    link = Link(link.total + len(joined), link.base, link.upto, (*link.segments, *joined))
                    conn.execute(_JOIN_LINK, (link.dumps(), link.total, seq))

        await self._write_with(run, tx)

    async def _write_with(self, fn: Any, tx: Tx | None) -> None:
        """``fn(conn)`` on the writer connection, in ``tx`` or in a transaction of its own."""
        if tx is not None:
            await self._writer.run(fn)
            return

        def run(conn: Any) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                fn(conn)
                conn.execute("COMMIT")
            except BaseException:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise

        async with self._write_lock:
            await self._writer.run(run)

    async def message_id_exists(self, session_id: str, message_id: str) -> bool:
        row = await self._fetchone(
            "SELECT 1 FROM messages WHERE session_id = ? AND message_id = ? LIMIT 1", (session_id, message_id)
        )
        return row is not None

    async def get_task(self, task_id: str) -> TaskRow | None:
        r = await self._fetchone(f"SELECT {_TASK_COLS} FROM tasks WHERE id = ?", (task_id,))
        return task_row(r) if r else None

    async def session_tasks(self, session_id: str, include_rewound: bool = False) -> list[TaskRow]:
        where = "" if include_rewound else " AND rewound_by IS NULL"
        rows = await self._fetchall(
            f"SELECT {_TASK_COLS} FROM tasks WHERE session_id = ?{where} ORDER BY seq", (session_id,)
        )
        return [task_row(r) for r in rows]

    async def session_tasks_page(
        self, session_id: str, *, limit: int, before: str = "", include_rewound: bool = False
    ) -> TaskPage:
        """The newest ``limit`` tasks of the session older than the cursor ``before`` (a previous
        page's ``next_token``), oldest first; one index range read, whatever the session's size.
        ``total`` is not counted (-1)."""
        where = "session_id = ?" + ("" if include_rewound else " AND rewound_by IS NULL")
        params: list[Any] = [session_id]
        if before:
            where += " AND seq < ?"
            params.append(_decode_cursor(before)[1])
        rows = await self._fetchall(
            f"SELECT {_TASK_COLS} FROM tasks WHERE {where} ORDER BY seq DESC LIMIT ?", [*params, limit + 1]
        )
        tasks = [task_row(r) for r in reversed(rows[:limit])]
        next_token = _encode_cursor("", tasks[0].seq) if len(rows) > limit else ""
        return TaskPage(tasks=tasks, total=-1, next_token=next_token)

    async def unfinished_tasks(self) -> list[TaskRow]:
        """Turns that were running (a task waiting for the user's answer is not running)."""
        done = (*TERMINAL_STATES, "input-required", "auth-required")
        marks = ",".join("?" for _ in done)
        rows = await self._fetchall(f"SELECT {_TASK_COLS} FROM tasks WHERE state NOT IN ({marks}) ORDER BY seq", done)
        return [task_row(r) for r in rows]

    async def list_tasks(
        self,
        user_id: str,
        *,
        context_id: str | None = None,
        state: str | None = None,
        updated_after: str | None = None,
        page_size: int = 50,
        page_token: str = "",
    ) -> TaskPage:
        """The user's current (not rewound) tasks, most recently updated first, one page at a time.

        ``page_token`` is the ``next_token`` of the previous page (an opaque cursor: the last
        task's update time and ``seq``); a token that is not one raises :class:`InvalidPageToken`.
        """
        where = ["user_id = ?", "rewound_by IS NULL"]
        params: list[Any] = [user_id]
        if context_id is not None:
            where.append("session_id = ?")
            params.append(context_id)
        if state is not None:
            where.append("state = ?")
            params.append(state)
        if updated_after is not None:
            where.append("updated_at >= ?")
            params.append(updated_after)
        filters = " AND ".join(where)
        count = await self._fetchone(f"SELECT COUNT(*) FROM tasks WHERE {filters}", params)
        page_where = filters
        page_params = list(params)
        if page_token:
            updated_at, seq = _decode_cursor(page_token)
            page_where += " AND (updated_at < ? OR (updated_at = ? AND seq < ?))"
            page_params += [updated_at, updated_at, seq]
        rows = await self._fetchall(
            f"SELECT {_TASK_COLS} FROM tasks WHERE {page_where} ORDER BY updated_at DESC, seq DESC LIMIT ?",
            [*page_params, page_size + 1],
        )
        tasks = [task_row(r) for r in rows[:page_size]]
        next_token = _encode_cursor(tasks[-1].updated_at, tasks[-1].seq) if len(rows) > page_size else ""
        return TaskPage(tasks=tasks, total=count[0] if count else 0, next_token=next_token)

    async def history_seqs(self, task: TaskRow) -> list[int]:
        """The message seqs of a rewind task's stored history, oldest first (:func:`history_seqs`)."""
        refs = task.history_refs
        return await self._reader.run(lambda conn: history_seqs(conn, task.session_id, task.seq, refs))

    async def task_history_bodies(self, task: TaskRow, *, v1: bool = False) -> list[str]:
        """Raw JSON bodies of a task's history, oldest first."""
        if task.history_refs is not None:
            return await self.message_bodies(await self.history_seqs(task), v1=v1)
        column = "body_v1" if v1 else "body"
        rows = await self._fetchall(
            f"SELECT seq, {column}, {sound_sql(column, v1=v1)} FROM messages WHERE task_id = ? ORDER BY seq", (task.id,)
        )
        return [checked_body(r[1], r[0], v1=v1, sound=r[2]) for r in rows]

    async def tasks_history_bodies(
        self, tasks: Sequence[TaskRow], *, v1: bool = False, newest: int | None = None
    ) -> dict[str, list[str]]:
        """History bodies (0.3 JSON, or 1.0 with ``v1``) of many tasks, in two reads: the messages
        the turn/fork tasks own, and the messages the rewind tasks refer to (each read once, by
        index -- a page of a long session reads only what the page holds). ``newest``: of a rewind
        task's, only its newest ``newest`` are read (a page's histories cut to that: the rest of a
        long session's effective history is not read at all)."""
        column = "body_v1" if v1 else "body"
        owners = [t.id for t in tasks if t.history_refs is None]
        refs: dict[str, list[int]] = {}

        def read(conn: sqlite3.Connection) -> tuple[list[tuple[Any, ...]], list[tuple[Any, ...]]]:
            for t in tasks:
                if t.history_refs is not None:
                    refs[t.id] = history_seqs(conn, t.session_id, t.seq, t.history_refs, newest)
            owned = (
                conn.execute(
                    f"SELECT m.task_id, m.{column}, m.seq, {sound_sql('m.' + column, v1=v1)} FROM json_each(?) AS j "
                    "CROSS JOIN messages AS m "
                    "ON m.task_id = j.value ORDER BY j.key, m.seq",
                    (dumps(owners),),
                ).fetchall()
                if owners
                else []
            )
            wanted = sorted({s for seqs in refs.values() for s in seqs})
            referred = (
                conn.execute(
                    f"SELECT m.seq, m.{column}, {sound_sql('m.' + column, v1=v1)} FROM json_each(?) AS j "
                    "CROSS JOIN messages AS m ON m.seq = j.value",
                    (dumps(wanted),),
                ).fetchall()
                if wanted
                else []
            )
            return owned, referred

        owned, referred = await self._reader.run(read)
        result: dict[str, list[str]] = {t.id: [] for t in tasks}
        for task_id, body, seq, sound in owned:
            result[task_id].append(checked_body(body, seq, v1=v1, sound=sound))
        by_seq = {seq: checked_body(body, seq, v1=v1, sound=sound) for seq, body, sound in referred}
        for task_id, seqs in refs.items():
            result[task_id] = [by_seq[s] for s in seqs if s in by_seq]
        return result

    async def message_bodies(self, seqs: Sequence[int], *, v1: bool = False) -> list[str]:
        """Raw JSON of the messages ``seqs``, in that order (0.3 JSON, or 1.0 JSON with ``v1``)."""
        if not seqs:
            return []
        column = "body_v1" if v1 else "body"
        rows = await self._fetchall(
            f"SELECT m.seq, m.{column}, {sound_sql('m.' + column, v1=v1)} FROM json_each(?) AS j "
            "JOIN messages AS m ON m.seq = j.value ORDER BY j.key",
            (dumps(list(seqs)),),
        )
        return [checked_body(r[1], r[0], v1=v1, sound=r[2]) for r in rows]


def _holds_task(conn: Any, session_id: str, seq: int, text: str, task_id: str) -> bool:
    """The history rewind task ``seq`` stores holds a message of task ``task_id``."""
    owned = {r[0] for r in conn.execute("SELECT seq FROM messages WHERE task_id = ?", (task_id,)).fetchall()}
    return bool(owned) and any(s in owned for s in history_seqs(conn, session_id, seq, text))
