"""The store's session log and the statements of rewind, redo and fork: what a rewind reads (the
session's task log, from covering indexes, kept between uses and read on by the rows written
since: :class:`LogCache`) and writes."""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, cast

from rewindtui.a2a import contract
from rewindtui.server.shared.wire import RENDER_VERSION, dumps, now_iso
from rewindtui.server.storage.session_log import UNREAD, LogMessage, LogTask, Plan, SessionLog
from rewindtui.server.storage.store_conn import StoreBase, Tx
from rewindtui.server.storage.store_rows import (
    _INSERT_MESSAGE,
    _INSERT_TASK,
    SessionRow,
    Statement,
    _insert_session,
    _task_body,
    message_row,
)

# -- a fork's copy of stored messages inside SQLite ------------------------------------------------
# What ``rewinds._moved`` and ``store_rows.message_row`` write for a fork's copy of a message, as SQL:
# the 0.3 body with ``contextId`` and ``taskId`` set (json_set keeps a key's place and appends a new
# one, as a dict does; SQLite writes compact JSON and keeps each value's text as it was stored, which
# is ``wire.dumps``' own), ``metadata`` an object (``{}`` when absent or null) whose
# ``kagent_session_id``, where present, is the fork's; and the 1.0 JSON (a2a-sdk's ``json.dumps``
# text, spaces and all) with the same three values replaced in the text, where each stands once as
# ``"key": value`` -- then it is the top-level one, as ``moved_v1_text`` changes it. A row that does
# not fit (another a2a-sdk's rendering, a value stored twice, metadata of another type, ...) is not
# copied: the copy checks each row in the pass that copies it, and ``fork_copy`` says whether it
# copied them all (else the fork copies every one through Python). Parameters: ?1 the seqs (JSON),
# ?2 the render version, ?3 the fork's session id, ?4 its task id.
_OLD_CTX = "'\"contextId\": ' || json_quote(json_extract(m.body_v1, '$.contextId'))"
_OLD_TASK = "'\"taskId\": ' || json_quote(json_extract(m.body_v1, '$.taskId'))"
_OLD_SID = "'\"kagent_session_id\": ' || json_quote(json_extract(m.body_v1, '$.metadata.kagent_session_id'))"


def _once(needle: str) -> str:
    return f"(length(m.body_v1) - length(replace(m.body_v1, {needle}, ''))) = length({needle})"


_FORK_FITS = (
    "json_valid(m.body) AND json_type(m.body) = 'object' "
    "AND json_type(m.body, '$.messageId') = 'text' AND json_type(m.body, '$.role') = 'text' "
    "AND coalesce(json_type(m.body, '$.metadata'), 'null') IN ('object', 'null') "
    "AND coalesce(json_type(m.body, '$.metadata.kagent_invocation_id'), 'null') IN ('text', 'null') "
    "AND m.render_version = ?2 AND json_valid(m.body_v1) AND json_type(m.body_v1) = 'object' "
    "AND json_type(m.body_v1, '$.metadata') = 'object' "
    f"AND json_type(m.body_v1, '$.contextId') IS NOT NULL AND {_once(_OLD_CTX)} "
    f"AND json_type(m.body_v1, '$.taskId') IS NOT NULL AND {_once(_OLD_TASK)} "
    f"AND (json_type(m.body_v1, '$.metadata.kagent_session_id') IS NULL OR {_once(_OLD_SID)})"
)
_FORK_MISFITS = (
    f"SELECT count(*), coalesce(sum(CASE WHEN {_FORK_FITS} THEN 0 ELSE 1 END), 0) "
    "FROM json_each(?1) AS j JOIN messages AS m ON m.seq = j.value"
)
_FORK_BODY = (
    "CASE WHEN json_type(m.body, '$.metadata') = 'object' "
    "THEN json_replace(json_set(m.body, '$.contextId', ?3, '$.taskId', ?4), '$.metadata.kagent_session_id', ?3) "
    "ELSE json_set(m.body, '$.contextId', ?3, '$.taskId', ?4, '$.metadata', json('{}')) END"
)
_FORK_V1 = (
    "CASE WHEN json_type(m.body_v1, '$.metadata.kagent_session_id') IS NULL THEN m.body_v1 "
    f"ELSE replace(m.body_v1, {_OLD_SID}, '\"kagent_session_id\": ' || json_quote(?3)) END"
)
_FORK_V1 = (
    f"replace(replace({_FORK_V1}, {_OLD_CTX}, '\"contextId\": ' || json_quote(?3)), "
    f"{_OLD_TASK}, '\"taskId\": ' || json_quote(?4))"
)
_FORK_COPY = (
    "INSERT INTO messages (session_id, task_id, message_id, invocation_id, role, body, body_v1, render_version) "
    "SELECT ?3, ?4, json_extract(m.body, '$.messageId'), json_extract(m.body, '$.metadata.kagent_invocation_id'), "
    f"json_extract(m.body, '$.role'), {_FORK_BODY}, {_FORK_V1}, ?2 "
    f"FROM json_each(?1) AS j JOIN messages AS m ON m.seq = j.value WHERE {_FORK_FITS} ORDER BY j.key"
)

# -- the same copy on PostgreSQL ---------------------------------------------------------------------
# PostgreSQL has no JSON function that keeps a text's key order and spacing (``jsonb`` re-orders
# keys), so there the three values are replaced in the text of both bodies, where each stands once
# as ``"key":"value"`` (0.3: ``wire.dumps``' compact text) and ``"key": "value"`` (1.0: a2a-sdk's
# ``json.dumps``). A text standing once as ``"key":"value"`` is that key of the top-level object (in
# a string a quote stands escaped), given the top-level key holds that value. Stricter than SQLite's
# check: ``contextId``, ``taskId`` and ``kagent_session_id`` (where present) strings JSON text holds
# as they are (no quote, backslash or control character), ``metadata`` an object in both bodies.
# ``pg_input_is_valid``: PostgreSQL 16 and later (an older one takes the Python path). ``OFFSET 0``
# keeps the subquery from being flattened into the outer query (each use of ``x.b`` would cast the
# body again). Parameters,
# in order: the seqs (JSON), the render version, the fork's session id and task id, and those two
# as JSON text (``wire.dumps``).
_PG_PLAIN = "'^[^\"\\\\[:cntrl:]]*$'"  # the regex ^[^"\\[:cntrl:]]*$ as a SQL literal
_PG_SID = ("metadata", "kagent_session_id")
_PG_OBJECTS = (
    "jsonb_typeof(x.b) = 'object' AND jsonb_typeof(x.b->'messageId') = 'string' "
    "AND jsonb_typeof(x.b->'role') = 'string' AND jsonb_typeof(x.b->'metadata') = 'object' "
    "AND coalesce(jsonb_typeof(x.b->'metadata'->'kagent_invocation_id'), 'null') IN ('string', 'null') "
    "AND jsonb_typeof(x.v) = 'object' AND jsonb_typeof(x.v->'metadata') = 'object'"
)


def _pg_get(doc: str, path: tuple[str, ...], *, text: bool = False) -> str:
    """``doc``'s value at ``path`` (``jsonb``; ``text``: as text)."""
    keys = [f"'{k}'" for k in path]
    return "(" + doc + "".join(f"->{k}" for k in keys[:-1]) + ("->>" if text else "->") + keys[-1] + ")"


def _pg_needle(doc: str, path: tuple[str, ...], sep: str) -> str:
    """The text ``"key"<sep>"value"`` of the string at ``path`` in ``doc``."""
    return f"('\"{path[-1]}\"{sep}\"' || {_pg_get(doc, path, text=True)} || '\"')"


def _pg_once(doc: str, body: str, path: tuple[str, ...], sep: str) -> str:
    """The string at ``path`` is plain and stands once in ``body`` as ``"key"<sep>"value"``."""
    needle = _pg_needle(doc, path, sep)
    return (
        f"jsonb_typeof({_pg_get(doc, path)}) = 'string' AND {_pg_get(doc, path, text=True)} ~ {_PG_PLAIN} "
        f"AND (length({body}) - length(replace({body}, {needle}, ''))) = length({needle})"
    )


def _pg_fits(doc: str, body: str, sep: str) -> str:
    return (
        f"{_pg_once(doc, body, ('contextId',), sep)} AND {_pg_once(doc, body, ('taskId',), sep)} "
        f"AND ({_pg_get(doc, _PG_SID)} IS NULL OR ({_pg_once(doc, body, _PG_SID, sep)}))"
    )


def _pg_moved(doc: str, body: str, sep: str) -> str:
    """``body`` with its three values replaced (each where :func:`_pg_once` found it)."""

    def put(inner: str, path: tuple[str, ...], value: str) -> str:
        return f"replace({inner}, {_pg_needle(doc, path, sep)}, '\"{path[-1]}\"{sep}' || {value})"

    moved = put(put(body, ("contextId",), "p.qsid"), ("taskId",), "p.qtid")
    return f"CASE WHEN {_pg_get(doc, _PG_SID)} IS NULL THEN {moved} ELSE {put(moved, _PG_SID, 'p.qsid')} END"


_PG_FITS = f"{_PG_OBJECTS} AND {_pg_fits('x.b', 'x.body', ':')} AND {_pg_fits('x.v', 'x.body_v1', ': ')}"
_PG_ROWS = (
    "WITH p AS (SELECT CAST(? AS text) AS seqs, CAST(? AS text) AS ver, CAST(? AS text) AS sid, "
    "CAST(? AS text) AS tid, CAST(? AS text) AS qsid, CAST(? AS text) AS qtid) "
    "SELECT {columns} FROM p, (SELECT j.o, m.body, m.body_v1, "
    "CASE WHEN pg_input_is_valid(m.body, 'jsonb') THEN m.body::jsonb END AS b, "
    "CASE WHEN m.render_version = p.ver AND pg_input_is_valid(m.body_v1, 'jsonb') THEN m.body_v1::jsonb END AS v "
    "FROM p, jsonb_array_elements_text(p.seqs::jsonb) WITH ORDINALITY AS j(s, o) "
    "JOIN messages AS m ON m.seq = j.s::bigint OFFSET 0) AS x"
)
_PG_FORK_MISFITS = _PG_ROWS.format(columns=f"count(*), coalesce(sum(CASE WHEN {_PG_FITS} THEN 0 ELSE 1 END), 0)")
_PG_FORK_COPY = (
    "INSERT INTO messages (session_id, task_id, message_id, invocation_id, role, body, body_v1, render_version) "
    + _PG_ROWS.format(
        columns="p.sid, p.tid, (x.b->>'messageId'), (x.b->'metadata'->>'kagent_invocation_id'), (x.b->>'role'), "
        f"{_pg_moved('x.b', 'x.body', ':')}, {_pg_moved('x.v', 'x.body_v1', ': ')}, p.ver"
    )
    + f" WHERE {_PG_FITS} ORDER BY x.o"
)


class LogStore(StoreBase):
    """The session log, rewind and fork (a part of :class:`~rewindtui.server.storage.store.Store`)."""

    async def session_log(self, session_id: str, tx: Tx | None = None, *, lazy: bool = False) -> SessionLog:
        """The session's task log: every task (rewound ones too) and every message's owner.

        Index range reads in one trip to the database thread, from the log's covering indexes
        (``tasks_log``, ``messages_log``: the rows, with their bodies, are not read); only rewind
        tasks' rows are (for the invocation they went back before, and their stored history).
        ``lazy``: those histories are left unread (``session_log.UNREAD``; :meth:`_read_refs`
        reads the ones needed) -- each holds a whole effective history.

        A lazy read outside a transaction is served from the log cache (:class:`LogCache`): the
        log read before, with the rows written since appended (only those are read)."""
        if lazy and tx is None:
            return await self.log_cache.get(self, session_id)
        tasks, rewinds, messages = await self._log_rows(session_id, tx, lazy=lazy)
        return _build(tasks, rewinds, messages)

    async def _log_rows(
        self, session_id: str, tx: Tx | None = None, *, lazy: bool, after: tuple[int, int] = (0, 0)
    ) -> tuple[list[Any], list[Any], list[Any]]:
        """The log's rows of ``session_id``: tasks, rewind tasks' (seq, before, refs), messages --
        those after ``after`` (task seq, message seq) only."""
        tasks_sql = (
            "SELECT seq, id, kind, invocation_id, rewound_by, created_at FROM tasks WHERE session_id = ? AND seq > ? "
            "ORDER BY seq"
        )
        refs = f"CASE WHEN history_refs IS NULL THEN NULL ELSE '{UNREAD}' END" if lazy else "history_refs"
        rewinds_sql = (
            f"SELECT seq, CASE WHEN json_valid(body) THEN json_extract(body, ?) END, {refs} "
            "FROM tasks WHERE session_id = ? AND seq > ? AND kind IN ('rewind', 'redo')"
        )
        rewinds_params = (f"$.metadata.{contract.REWOUND_BEFORE_KEY}", session_id, after[0])
        messages_sql = "SELECT seq, task_id, invocation_id FROM messages WHERE session_id = ? AND seq > ? ORDER BY seq"

        def read(conn: sqlite3.Connection) -> tuple[list[Any], list[Any], list[Any]]:
            return (
                conn.execute(tasks_sql, (session_id, after[0])).fetchall(),
                conn.execute(rewinds_sql, rewinds_params).fetchall(),
                conn.execute(messages_sql, (session_id, after[1])).fetchall(),
            )

        if tx is not None:
            return (
                await tx.fetchall(tasks_sql, (session_id, after[0])),
                await tx.fetchall(rewinds_sql, rewinds_params),
                await tx.fetchall(messages_sql, (session_id, after[1])),
            )
        return await self._reader.run(read)

    @property
    def log_cache(self) -> LogCache:
        cache: LogCache | None = self.__dict__.get("_log_cache")
        if cache is None:
            cache = self.__dict__["_log_cache"] = LogCache()
        return cache

    async def _read_refs(self, log: SessionLog, invocation_id: str | None = None, tx: Tx | None = None) -> SessionLog:
        """``log`` with the stored histories its current conversation (and a plan of
        ``invocation_id``) reads."""
        sql = "SELECT t.seq, t.history_refs FROM json_each(?) AS j JOIN tasks AS t ON t.seq = j.value"
        while needed := log.refs_needed(invocation_id):  # again if one turns out to hold none
            rows = await (
                tx.fetchall(sql, (dumps(needed),)) if tx is not None else self._fetchall(sql, (dumps(needed),))
            )
            self.log_cache.reads.histories += len(rows)
            self.log_cache.reads.history_bytes += sum(len(refs or "") for _, refs in rows)
            log.give_refs({seq: refs for seq, refs in rows})
        return log

    async def session_invocations(self, session_id: str) -> list[str]:
        """The invocation ids of the session's effective history, in order (each once). Read whole,
        not kept: the startup check reads every session once, and a log is kept for the rewinds
        and forks of sessions in use (:class:`LogCache`)."""
        log = await self._read_refs(_build(*await self._log_rows(session_id, lazy=True)))
        return log.current_invocations()

    async def message_ids(self, session_id: str) -> set[str]:
        rows = await self._fetchall("SELECT message_id FROM messages WHERE session_id = ?", (session_id,))
        return {r[0] for r in rows}

    async def plan_rewind(
        self,
        session_id: str,
        invocation_id: str,
        tx: Tx | None = None,
        *,
        current_only: bool = True,
        log: SessionLog | None = None,
    ) -> Plan:
        """Going back to just before ``invocation_id``: the effective history then, and the tasks
        whose rewound mark changes.

        With ``current_only`` (a rewind) the invocation must be in the session's effective history;
        otherwise (redo, fork) it may be any invocation of the session, a rewound one or a rewind's
        own. Raises :class:`~.session_log.NotInLog` when it is not one (unknown, or rewound).
        ``log``: the session's log as :meth:`session_log` (``lazy``) just read it, not read again.
        """
        if log is None:
            log = await self.session_log(session_id, tx, lazy=True)
        log = await self._read_refs(log, invocation_id, tx)
        return log.plan(invocation_id, current_only=current_only)

    @staticmethod
    def rewind_statements(
        *, session_id: str, rewind_task: dict[str, Any], plan: Plan, user_id: str, invocation_id: str | None
    ) -> list[Statement]:
        """Store the rewind (or redo) task; mark the tasks it takes away rewound by it, and clear the
        mark of those it brings back."""
        ts = now_iso()
        refs = plan.link.dumps()
        kind = "redo" if (rewind_task.get("metadata") or {}).get(contract.REDO_OF_KEY) else "rewind"
        statements: list[Statement] = []
        if plan.hide:
            statements.append(
                (
                    "UPDATE tasks SET rewound_by = ?, rewound_at = ? WHERE seq IN (SELECT value FROM json_each(?))",
                    (rewind_task["id"], ts, dumps(plan.hide)),
                )
            )
        if plan.restore:
            statements.append(
                (
                    "UPDATE tasks SET rewound_by = NULL, rewound_at = NULL "
                    "WHERE seq IN (SELECT value FROM json_each(?))",
                    (dumps(plan.restore),),
                )
            )
        return [
            *statements,
            (
                _INSERT_TASK,
                (
                    rewind_task["id"],
                    session_id,
                    user_id,
                    kind,
                    invocation_id,
                    rewind_task["status"]["state"],
                    ts,
                    ts,
                    refs,
                    _task_body(rewind_task),
                ),
            ),
            ("UPDATE sessions SET updated_at = ? WHERE id = ?", (ts, session_id)),
        ]

    async def message_pairs(self, seqs: Sequence[int]) -> list[tuple[str, str | None]]:
        """(0.3 JSON, 1.0 JSON or None when another a2a-sdk rendered it) of the messages ``seqs``."""
        if not seqs:
            return []
        rows = await self._fetchall(
            "SELECT m.body, m.body_v1, m.render_version FROM json_each(?) AS j JOIN messages AS m ON m.seq = j.value "
            "ORDER BY j.key",
            (dumps(list(seqs)),),
        )
        return [(body, v1 if version == RENDER_VERSION else None) for body, v1, version in rows]

    async def fork_copy_in_database(self) -> bool:
        """The fork's copy of messages can be made inside this database (:meth:`fork_copy`):
        SQLite; PostgreSQL 16 or later (``pg_input_is_valid``). Asked once."""
        known: bool | None = self.__dict__.get("_fork_copy_in_database")
        if known is None:
            known = True
            if self.engine_name != "sqlite":
                row = await self._fetchone("SELECT CAST(current_setting('server_version_num') AS integer)")
                known = row is not None and int(row[0]) >= 160000
            self.__dict__["_fork_copy_in_database"] = known
        return known

    async def fork_copy_fits(self, seqs: Sequence[int]) -> bool:
        """Every one of the messages ``seqs`` is a stored message whose copy
        :meth:`fork_copy_statement` writes as the Python copy would, byte for byte (see
        :data:`_FORK_FITS`, :data:`_PG_FITS`). A fork does not ask first: :meth:`fork_copy` copies
        the ones that fit and says whether that was all of them."""
        if not seqs or not await self.fork_copy_in_database():
            return False
        if self.engine_name == "sqlite":
            row = await self._fetchone(_FORK_MISFITS, (dumps(list(seqs)), RENDER_VERSION))
        else:
            row = await self._fetchone(_PG_FORK_MISFITS, self._pg_fork_params("", "", seqs))
        return row is not None and row[0] == len(seqs) and row[1] == 0

    def fork_copy_statement(self, session_id: str, task_id: str, seqs: Sequence[int]) -> Statement:
        """Copy those of the messages ``seqs`` (in that order) that fit (:meth:`fork_copy_fits`) into
        the fork ``session_id``'s task ``task_id`` inside the database: ``INSERT ... SELECT``, no
        message through Python."""
        if self.engine_name == "sqlite":
            return (_FORK_COPY, (dumps(list(seqs)), RENDER_VERSION, session_id, task_id))
        return (_PG_FORK_COPY, self._pg_fork_params(session_id, task_id, seqs))

    @staticmethod
    def _pg_fork_params(session_id: str, task_id: str, seqs: Sequence[int]) -> tuple[str, ...]:
        return (dumps(list(seqs)), RENDER_VERSION, session_id, task_id, dumps(session_id), dumps(task_id))

    async def fork_copy(self, tx: Tx, session_id: str, task_id: str, seqs: Sequence[int]) -> bool:
        """In ``tx``: copy the messages ``seqs`` into the fork's task inside the database, the check
        of each (:meth:`fork_copy_fits`) made in the same pass; whether every one was copied (False:
        the caller rolls ``tx`` back and copies them through Python)."""
        if not seqs or not await self.fork_copy_in_database():
            return False
        return await tx.changes(self.fork_copy_statement(session_id, task_id, seqs)) == len(seqs)

    @staticmethod
    def fork_statements(
        *,
        session: SessionRow,
        fork_task: dict[str, Any],
        messages: Sequence[dict[str, Any]],
        v1_texts: Sequence[str | None] | None = None,
    ) -> list[Statement]:
        """A forked session holding one task (kind ``fork``) with ``messages`` (and their 1.0 JSON,
        None where it must be rendered)."""
        ts = now_iso()
        statements: list[Statement] = [
            _insert_session(session),
            (
                _INSERT_TASK,
                (
                    fork_task["id"],
                    session.id,
                    session.user_id,
                    "fork",
                    None,
                    "completed",
                    ts,
                    ts,
                    None,
                    _task_body(fork_task),
                ),
            ),
        ]
        texts = v1_texts if v1_texts is not None else [None] * len(messages)
        statements += [
            (_INSERT_MESSAGE, message_row(session.id, fork_task["id"], m, v1))
            for m, v1 in zip(messages, texts, strict=True)
        ]
        return statements


def _build(
    tasks: Sequence[Any], rewinds: Sequence[Any], messages: Sequence[Any], base: SessionLog | None = None
) -> Any:
    """The log of these rows (appended to ``base``: None when only a log built afresh is right)."""
    went_back = {seq: (before, refs_json) for seq, before, refs_json in rewinds}
    none = (None, None)
    log_tasks = [
        LogTask(seq, tid, kind, inv, went_back.get(seq, none)[0], rewound, went_back.get(seq, none)[1], created)
        for seq, tid, kind, inv, rewound, created in tasks
    ]
    if base is None:
        task_seq = {r[1]: r[0] for r in tasks}
        return SessionLog(
            log_tasks,
            (LogMessage(seq, task_seq[task_id], task_id, inv) for seq, task_id, inv in messages if task_id in task_seq),
        )
    known = base._by_id
    task_seq = {r[1]: r[0] for r in tasks}
    new_messages = []
    for seq, task_id, inv in messages:
        owner = task_seq.get(task_id)
        if owner is None and task_id in known:
            owner = base.tasks[known[task_id]].seq
        if owner is not None:
            new_messages.append(LogMessage(seq, owner, task_id, inv))
    return base if base.extend(log_tasks, new_messages) else None


@dataclass
class _Entry:
    log: SessionLog
    #: (oldest task seq, newest task seq, oldest message seq, newest message seq) the log holds
    bounds: tuple[int, int, int, int]
    #: rows read with no invocation yet (a turn's, until ADK has its user event): read again
    unsettled_tasks: list[int]
    unsettled_messages: list[int]


@dataclass
class ReadCount:
    """Rows the log read (the bounded-read test and the bench read these)."""

    tasks: int = 0
    messages: int = 0
    full: int = 0  # logs built from every row
    #: rewind tasks' stored histories read for a plan (:meth:`LogStore._read_refs`), and their length
    histories: int = 0
    history_bytes: int = 0


class LogCache:
    """The newest logs read (a few sessions), kept in step with the store by reading only what
    changed. On each use one trip reads the session's oldest and newest task and message seqs
    (index lookups, nothing counted) and whether a row that had no invocation got one; then the
    rows after the newest seqs the log holds are read and appended. The log is built afresh from
    every row when the oldest seqs moved (the session was deleted, and made again), a row that had
    no invocation got one, or the new rows name an invocation an older rewind went back before.

    Why that is enough: the store appends tasks and messages and never deletes one (but with its
    whole session); a row's seq, id, kind, owner and invocation are written once (the invocation of
    a turn's task and user message when ADK has it: the unsettled rows); the writes to one session
    are serialized (:class:`~rewindtui.server.service.jobs.Jobs`, on a team server with the
    session's lease), so a row of the session is never committed with an older seq than one
    already read. The log does not read ``rewound_by`` (a cached log keeps the marks as first
    read) nor the rewinds' histories (read per use, into a :meth:`SessionLog.view`)."""

    def __init__(self, size: int = 8) -> None:
        self.size = size
        self._entries: OrderedDict[str, _Entry] = OrderedDict()
        self.reads = ReadCount()

    def drop(self, session_id: str | None = None) -> None:
        if session_id is None:
            self._entries.clear()
        else:
            self._entries.pop(session_id, None)

    async def get(self, store: LogStore, session_id: str) -> SessionLog:
        """The session's log (lazy: histories unread), as a view of the cached one."""
        entry = self._entries.get(session_id)
        if entry is not None:
            fresh = await self._refresh(store, session_id, entry)
            if fresh is not None:
                self._keep(session_id, fresh)
                return fresh.log.view()
        tasks, rewinds, messages, bounds = await _read_all(store, session_id)
        self.reads.tasks += len(tasks)
        self.reads.messages += len(messages)
        self.reads.full += 1
        log = cast(SessionLog, _build(tasks, rewinds, messages))
        if bounds == _bounds(tasks, messages, None):  # else a write came between the two reads: not kept
            self._keep(session_id, _entry(log, tasks, messages, bounds, None))
        return log.view()

    def _keep(self, session_id: str, entry: _Entry) -> None:
        self._entries[session_id] = entry
        self._entries.move_to_end(session_id)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)

    async def _refresh(self, store: LogStore, session_id: str, entry: _Entry) -> _Entry | None:
        settled_sql = (
            "SELECT count(*) FROM {table} WHERE seq IN (SELECT value FROM json_each(?)) AND invocation_id IS NOT NULL"
        )

        def check(conn: Any) -> tuple[tuple[int, int, int, int], bool]:
            bounds = _read_bounds(conn, session_id)
            settled = False
            for table, seqs in (("tasks", entry.unsettled_tasks), ("messages", entry.unsettled_messages)):
                if seqs:
                    settled = settled or bool(
                        conn.execute(settled_sql.format(table=table), (dumps(seqs),)).fetchone()[0]
                    )
            return bounds, settled

        bounds, settled = await store._reader.run(check)
        if settled or bounds[0] != entry.bounds[0] or bounds[2] != entry.bounds[2]:
            return None
        if bounds == entry.bounds:
            return entry
        after = (entry.bounds[1], entry.bounds[3])
        tasks, rewinds, messages = await store._log_rows(session_id, lazy=True, after=after)
        self.reads.tasks += len(tasks)
        self.reads.messages += len(messages)
        if _bounds(tasks, messages, entry.bounds) != bounds:  # written since the check: read again next time
            return None
        log = _build(tasks, rewinds, messages, base=entry.log)
        return None if log is None else _entry(log, tasks, messages, bounds, entry)


def _read_bounds(conn: Any, session_id: str) -> tuple[int, int, int, int]:
    """(oldest task seq, newest task seq, oldest message seq, newest message seq) of the session:
    index lookups, nothing counted (0: none)."""
    out: list[int] = []
    for table in ("tasks", "messages"):
        for fn in ("min", "max"):
            row = conn.execute(f"SELECT coalesce({fn}(seq), 0) FROM {table} WHERE session_id = ?", (session_id,))
            out.append(int(row.fetchone()[0]))
    return out[0], out[1], out[2], out[3]


def _bounds(
    tasks: Sequence[Any], messages: Sequence[Any], base: tuple[int, int, int, int] | None
) -> tuple[int, int, int, int]:
    """The bounds of ``base`` with ``tasks`` and ``messages`` (newer rows, oldest first) added."""
    t0, t1, m0, m1 = base or (0, 0, 0, 0)
    if tasks:
        t0, t1 = t0 or tasks[0][0], tasks[-1][0]
    if messages:
        m0, m1 = m0 or messages[0][0], messages[-1][0]
    return t0, t1, m0, m1


async def _read_all(
    store: LogStore, session_id: str
) -> tuple[list[Any], list[Any], list[Any], tuple[int, int, int, int]]:
    tasks, rewinds, messages = await store._log_rows(session_id, lazy=True)
    bounds = await store._reader.run(lambda conn: _read_bounds(conn, session_id))
    return tasks, rewinds, messages, bounds


def _entry(
    log: SessionLog,
    tasks: Sequence[Any],
    messages: Sequence[Any],
    bounds: tuple[int, int, int, int],
    base: _Entry | None,
) -> _Entry:
    unsettled_tasks = [r[0] for r in tasks if r[3] is None]
    unsettled_messages = [r[0] for r in messages if r[2] is None]
    if base is not None:
        unsettled_tasks = base.unsettled_tasks + unsettled_tasks
        unsettled_messages = base.unsettled_messages + unsettled_messages
    return _Entry(log, bounds, unsettled_tasks, unsettled_messages)
